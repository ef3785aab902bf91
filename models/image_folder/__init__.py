"""image_folder: a classifier of a folder of JPEGs by transfer from Keras VGG16 (frozen but for
block 5, a new softmax), as the OCT2017 reference trains it.

`model` (`Vgg16Transfer`), `recipe`, `entry` (its registry entry). Scripts:
train_image_folder.py, eval_image_folder.py; data: `models.datasets.image_folder`.
"""
