"""imagenet: tf-slim's ResNet v1 (50/101/152) with the reference ImageNet recipe.

`model` (`ResNet`, slim's variable names), `recipe` (warmup, cosine, label smoothing, L2),
`entry` (its registry entry). Scripts: train_imagenet.py, eval_imagenet.py; data:
`models.datasets.imagenet`.
"""
