"""side_by_side: binary segmentation models with a ResNet-34 encoder (Unet, Linknet, FPN, as
`segmentation_models` builds them, in graph mode with tf-slim), trained side by side.

`architectures` (one module per decoder), `resnet34`, `layers`, `model` (`SegmentationNet`),
`recipe` (each model's), `inputs` (either data set), `data_flags` (the scripts' data flags).
Scripts: train_side_by_side.py, eval_side_by_side.py, benchmark_side_by_side.py; data:
`models.datasets.segmentation_folder`, `models.datasets.kolektor`. This package itself, its
`architectures` and `data_flags` import no TensorFlow: the scripts read their flags first.
"""

# Adam's, for every model (`recipe`).
LEARNING_RATE = 1e-3
