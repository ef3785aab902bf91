"""Stand-in for the CIFAR-10 tutorial's `cifar10_input.py`, written for the tests of
`scripts/regress_cifar10.py --original_dir` in the tutorial's module layout (it is not the
tutorial's code): the data set's constants, which `cifar10.py` takes from here."""
IMAGE_SIZE = 24
NUM_CLASSES = 10
NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN = 50000
NUM_EXAMPLES_PER_EPOCH_FOR_EVAL = 10000
