"""Evaluating a trained network: one path for every evaluation script.

    evaluation.add_eval_flags(parser, 'scripts/train_x.py', '/tmp/x_train', '/tmp/x_eval', 32,
                              precise_bn_batches=evaluation.PRECISE_BN_BATCHES)
    checkpoint = evaluation.checkpoint_from_flags(args)        # 1. choose (damaged ones skipped)
    statistics = evaluation.statistics_from_flags(args, checkpoint, training_batches)
    outputs = evaluation.predict(build_fn, checkpoint, images, args.batch_size,   # 2. restore,
                                 statistics=statistics)       # re-estimate batch norm, run
    results = evaluation.classification_metrics(labels, outputs['classes'], names)  # 3. reduce
    reports.write_results(os.path.join(out_dir, 'results.json'), results)         # 4. report
    evaluation.write_events(out_dir, checkpoint, results)      # and to TensorBoard

`choice` chooses the checkpoint (and polls a running training) and the batch-norm statistics;
`restore` restores it into a network built in a graph of its own and runs it (`Restored`,
`predict`), with the moving batch-norm statistics or precise ones re-estimated from training
batches (`precise_bn`, on the layers `batch_norm` finds in the graph); `metrics` reduces the
outputs to figures; `towers.reports` writes them, and `events` puts them in TensorBoard at the
checkpoint's step. `regression` compares a port's figures with
its original's, which `replay` measures from given weights on given batches.
"""
from towers.evaluation.choice import (PRECISE_BN_BATCHES, add_eval_flags, checkpoint_from_flags,
                                      poll_checkpoints, require_variables, save_precise_bn,
                                      statistics_from_flags, train_dir_from_flags)
from towers.evaluation.metrics import (classification_metrics, detection_metrics,
                                       precision_recall_curve, segmentation_metrics)
from towers.evaluation.precise_bn import (EACH_BATCH, MOVING_AVERAGES, PreciseBN, PreparedBatch,
                                         pipeline_batches)
from towers.evaluation.events import write_events
from towers.evaluation.restore import Restored, predict, restore_checkpoint

__all__ = ['EACH_BATCH', 'MOVING_AVERAGES', 'PRECISE_BN_BATCHES', 'PreciseBN', 'PreparedBatch',
           'Restored',
           'add_eval_flags', 'checkpoint_from_flags', 'classification_metrics',
           'detection_metrics', 'pipeline_batches', 'poll_checkpoints', 'precision_recall_curve',
           'predict', 'require_variables', 'restore_checkpoint', 'save_precise_bn',
           'segmentation_metrics', 'statistics_from_flags', 'train_dir_from_flags',
           'write_events']
