"""segdec: SegDecNet (Tabernik et al. 2019), its multi-GPU version ported and regressed.

`model` (the segmentation and decision nets), `recipe` (the two-stage schedule), `regression`
(its figures against the original's), `live_regression` (against a copy of the original's code,
run live), `entry` (its registry entry). Scripts: train_segdec.py,
eval_segdec.py, regress_segdec.py, make_kolektor_data.py; data: `models.datasets.kolektor`.
This package itself holds what the scripts' flags and the registry's `about` need, and imports
no TensorFlow.
"""
import collections

from models import registry
from models.datasets import kolektor as data

# The network's (`model`): its pixel logits' stride; sizes must allow the decision net's three
# further 2x2 pools.
OUTPUT_STRIDE = 8
SIZE_MULTIPLE = OUTPUT_STRIDE * 8

Variant = collections.namedtuple('Variant', ['num_logits', 'image_height', 'image_width'])
VARIANTS = {
    # The TF1 multi-GPU version: a two-class softmax head on 1280x512 inputs.
    'tower': Variant(num_logits=2, image_height=1280, image_width=512),
    # The paper: one logit (sigmoid) on 1408x512 inputs.
    'paper': Variant(num_logits=1, image_height=1408, image_width=512),
}

# The training (`recipe`): its modes, and the default schedule: the paper's learning rate for
# cross entropy, and as many epochs (one epoch being as many images as the training split
# holds) as the generated set needs at 320x128 to reach an average precision near 0.99 (see
# docs/workloads.md). A decision step costs about a third of a segment step, since the frozen
# segmentation net only runs forward.
TRAIN_MODES = ('two_stage', 'segment', 'decision', 'total')
SEGMENT_EPOCHS = 1.5
DECISION_EPOCHS = 2.0
LEARN_RATE = 0.1

# The benchmark's side (`entry`): the smallest square input on which every layer gets a
# gradient (at 64x64 the decision net's last convolution has a single output pixel), for a
# cheap step: the segmentation stage takes 11.4 GFLOP per image forward and 34 GFLOP to train,
# most of it in the 15x15 feature convolution (about 1 s per image on 2 CPU cores, milliseconds
# on a GPU).
BENCHMARK_SIZE = 128

ABOUT = registry.About(
    title='SegDecNet %dx%d' % (BENCHMARK_SIZE, BENCHMARK_SIZE),
    description='SegDecNet\'s segmentation stage on %dx%d KolektorSDD images (%s)'
                % (BENCHMARK_SIZE, BENCHMARK_SIZE, data.DEFAULT_DATA_DIR),
    batch_size=1)
