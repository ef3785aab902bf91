"""towers: the TF1 multi-GPU tower pattern (CIFAR-10 tutorial, SegDecNet) on TensorFlow 2.x."""
from setuptools import find_packages, setup

setup(
    name='towers',
    version='0.1.0',
    description='Legacy-faithful TensorFlow 1 graph-mode multi-GPU tower training on TF 2.x',
    packages=find_packages(include=['towers', 'towers.*', 'models', 'models.*']),
    python_requires='>=3.10',
    install_requires=[
        'tensorflow>=2.16,<2.22',
        'tf-keras>=2.16,<2.22',
        'tf-slim==1.1.0',
        'absl-py>=1.0',
        'numpy>=1.26',
        'pillow>=10',
        'h5py>=3.11',
        'matplotlib>=3.8',
        'tqdm>=4.66',
        'tensorboard>=2.16,<2.22',
    ],
    # `towers-legacy script.py [flags]` runs a TF1-era script unchanged (towers/legacy).
    entry_points={'console_scripts': ['towers-legacy = towers.legacy.entry:main']},
)
