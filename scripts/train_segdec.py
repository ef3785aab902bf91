"""Trains SegDecNet on KolektorSDD with synchronous multi-GPU towers.

    python scripts/train_segdec.py --num_gpus 2 --image_height 320 --image_width 128 \
        --train_dir /tmp/segdec_train

By default both of the paper's stages run in one command: the segmentation net on the pixel
loss, then the decision net on the class loss with the segmentation net frozen. Without
--data_dir a generated data set in KolektorSDD's layout is used (and written on first use).
With `--job_name`, `--task_index`, `--ps_hosts` and `--worker_hosts` it is one task of a
cluster on TensorFlow's distributed runtime (see `scripts/launch_local_cluster.py`).
"""
import logging

import towers
from models import segdec
from models.datasets import kolektor
from towers import cli, cluster, flags

log = logging.getLogger('train_segdec')


def parse_args(argv):
    parser = flags.FlagParser(description=__doc__.split('\n')[0])
    flags.add_training_flags(parser, save_checkpoint_steps=200)
    parser.add_argument('--data_dir', type=flags.input_dir, default=None,
                        help='KolektorSDD (folders kos01..kos50). Default: the generated set '
                             'in %s, written if missing.' % kolektor.DEFAULT_DATA_DIR)
    parser.add_argument('--train_dir', type=flags.output_dir, default='/tmp/segdec_train',
                        help='Checkpoints and event logs; training resumes from the newest '
                             'checkpoint here.')
    parser.add_argument('--batch_size', type=flags.positive_int, default=1,
                        help='Images per tower and step (the paper: 1; with more, batch norm '
                             'lets the decision net compare the defective and the clean image '
                             'of a batch, which it cannot do at test time).')
    parser.add_argument('--learn_rate', type=flags.positive_float, default=segdec.LEARN_RATE,
                        help='Learning rate of plain gradient descent, both stages.')
    parser.add_argument('--train_mode', choices=segdec.TRAIN_MODES, default='two_stage',
                        help='two_stage: segment, then decision (segmentation frozen); or one '
                             'train op only.')
    length = parser.add_mutually_exclusive_group()
    length.add_argument('--epochs', type=flags.positive_float, default=None,
                        help='Length of the first (or only) stage in epochs, an epoch being as '
                             'many images as the training split holds (default %s for segment '
                             'and total, %s for decision).' % (segdec.SEGMENT_EPOCHS,
                                                              segdec.DECISION_EPOCHS))
    length.add_argument('--max_steps', type=flags.positive_int, default=None,
                        help='The global step at which the first (or only) stage ends; the '
                             'decision stage of two_stage adds its steps. A run that finds a '
                             'later checkpoint in --train_dir skips the stages it has done.')
    second = parser.add_mutually_exclusive_group()
    second.add_argument('--decision_epochs', type=flags.positive_float,
                        default=segdec.DECISION_EPOCHS,
                        help='two_stage: length of the decision stage in epochs.')
    second.add_argument('--decision_steps', type=flags.positive_int, default=None,
                        help='two_stage: length of the decision stage in steps.')
    parser.add_argument('--variant', choices=sorted(segdec.VARIANTS), default='tower',
                        help='tower: two-class softmax head (the TF1 multi-GPU version); '
                             'paper: one sigmoid logit.')
    parser.add_argument('--image_height', type=flags.positive_int, default=None,
                        help='Input height, a multiple of %d (default: the variant\'s, 1280 or '
                             '1408).' % segdec.SIZE_MULTIPLE)
    parser.add_argument('--image_width', type=flags.positive_int, default=None,
                        help='Input width, a multiple of %d (default 512).' % segdec.SIZE_MULTIPLE)
    parser.add_argument('--split', choices=kolektor.SPLITS, default='common',
                        help='common: the first 30 of 50 items train; fold1..3: the paper\'s '
                             '3-fold split by item.')
    parser.add_argument('--dilate', type=flags.positive_int, default=kolektor.DILATE,
                        help='Odd side of the square that dilates the masks (1: none).')
    return parser.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    # Imported after the flags: --help and a bad flag answer without TensorFlow (towers.cli).
    from models.datasets.kolektor import reader as kolektor_input, synthetic as kolektor_synthetic
    from models.segdec import model, recipe

    height, width = model.input_size(args.variant, args.image_height, args.image_width)
    global_batch = args.batch_size * args.num_gpus

    def work(role, setup):
        data_dir = kolektor_synthetic.locate_or_generate(args.data_dir)
        data = kolektor_input.load_split(data_dir, 'train', height, width, args.split,
                                         args.dilate, segdec.OUTPUT_STRIDE)
        log.info('training on %d images of %s (%d defective), %dx%d',
                 len(data.labels), data_dir, data.labels.sum(), height, width)
        end_step = 0
        for objective, steps in recipe.stages(args.train_mode, len(data.labels), global_batch,
                                              args.epochs, args.max_steps,
                                              args.decision_epochs, args.decision_steps):
            end_step += steps
            log.info('stage %s: until global step %d (%d steps of %d images)',
                     objective, end_step, steps, global_batch)
            net = model.SegDecNet(args.variant, frozen_segment=objective == 'decision')
            result = towers.fit(
                recipe.SegDecRecipe(net, args.learn_rate),
                lambda: kolektor_input.training_input(data, args.num_gpus, args.batch_size,
                                                       flags.input_seed(args)),
                setup, role, args.train_dir, end_step, global_batch, objective=objective,
                validation_input=lambda: kolektor_input.validation_input(
                    kolektor_input.evaluation_input(data_dir, height, width, 'test', args.split,
                                                    args.dilate, segdec.OUTPUT_STRIDE),
                    args.batch_size),
                **flags.fit_options(args))
            if result.interrupted:
                break
        return result

    return cluster.run_task(args, work)


if __name__ == '__main__':
    cli.run(main)
