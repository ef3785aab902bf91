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
from towers import lazy

# Imported when first used (`towers.lazy`): a script reads `eval_flags`' flags before TensorFlow.
__getattr__, __dir__ = lazy.exports(__name__, {
    'checkpoint_from_flags': 'towers.evaluation.choice',
    'poll_checkpoints': 'towers.evaluation.choice',
    'require_variables': 'towers.evaluation.choice',
    'save_precise_bn': 'towers.evaluation.choice',
    'statistics_from_flags': 'towers.evaluation.choice',
    'PRECISE_BN_BATCHES': 'towers.evaluation.eval_flags',
    'add_eval_flags': 'towers.evaluation.eval_flags',
    'train_dir_from_flags': 'towers.evaluation.eval_flags',
    'write_events': 'towers.evaluation.events',
    'classification_metrics': 'towers.evaluation.metrics',
    'detection_metrics': 'towers.evaluation.metrics',
    'precision_recall_curve': 'towers.evaluation.metrics',
    'segmentation_metrics': 'towers.evaluation.metrics',
    'EACH_BATCH': 'towers.evaluation.precise_bn',
    'MOVING_AVERAGES': 'towers.evaluation.precise_bn',
    'PreciseBN': 'towers.evaluation.precise_bn',
    'PreparedBatch': 'towers.evaluation.precise_bn',
    'pipeline_batches': 'towers.evaluation.precise_bn',
    'Restored': 'towers.evaluation.restore',
    'predict': 'towers.evaluation.restore',
    'restore_checkpoint': 'towers.evaluation.restore'})

__all__ = ['EACH_BATCH', 'MOVING_AVERAGES', 'PRECISE_BN_BATCHES', 'PreciseBN', 'PreparedBatch',
           'Restored',
           'add_eval_flags', 'checkpoint_from_flags', 'classification_metrics',
           'detection_metrics', 'pipeline_batches', 'poll_checkpoints', 'precision_recall_curve',
           'predict', 'require_variables', 'restore_checkpoint', 'save_precise_bn',
           'segmentation_metrics', 'statistics_from_flags', 'train_dir_from_flags',
           'write_events']
