"""cifar10: the TF1 multi-GPU tutorial's CIFAR-10 network (TF 1.13), ported and regressed.

`model` (the tutorial's `inference`, `loss`, `tower_loss`, variable names), `recipe` (its
schedule, optimizer and moving averages), `regression` (its figures against the original's),
`entry` (its registry entry). Scripts: train_cifar10_multi_gpu.py, cifar10_eval.py,
regress_cifar10.py; data: `models.datasets.cifar10`.
"""
