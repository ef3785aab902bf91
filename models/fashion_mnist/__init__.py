"""fashion_mnist: the Keras CNN of Zalando Research's multi-GPU Fashion-MNIST example, one model
shared by the towers.

`model`, `recipe`, `entry` (its registry entry). Scripts: train_fashion_mnist.py,
eval_fashion_mnist.py; data: `models.datasets.fashion_mnist`.
"""
