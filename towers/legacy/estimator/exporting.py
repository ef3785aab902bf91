"""What an Estimator exports, and from which checkpoint: `export_saved_model` of the serving
graph (through `towers.export.save`), and TF 1.15's `experimental_export_all_saved_models`: one
SavedModel holding a graph per mode (TRAIN, EVAL, PREDICT), each under its tags of
`EXPORT_TAG_MAP` with its signatures, the variables restored from the checkpoint by the
`model_fn`'s scaffold's saver, its `local_init_op` the graph's main op.
"""
import os
import shutil

from towers import export as export_lib, files
from towers.compat import internal, tf
from towers.export.saved_model import check_new_directory
from towers.legacy.estimator import export
from towers.legacy.estimator.spec import EstimatorError, ModeKeys

# The order the graphs are added in: the first one's variables are the SavedModel's, and
# TRAIN's are those its checkpoints hold.
_MODES = (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT)
# The collection of a SavedModel's TRAIN graph holding its train op, which TF 1.x's builder
# stored (TF 2.x's public API no longer names it).
_TRAIN_OP_KEY = internal('saved_model.constants').TRAIN_OP_KEY


def _checkpoint_and_dir(estimator, checkpoint_path, export_dir_base, assets_extra, what):
    """(checkpoint, new export folder) of an export by `estimator`: the checkpoint the program
    named, else the newest of its `model_dir`, else (before any) the newest one of its warm
    start's, as TF 1.15 took; the folder `export_dir_base/<timestamp>`.

    Raises:
      EstimatorError: there is no checkpoint; a value of `assets_extra` is no file.
    """
    for inside, source in (assets_extra or {}).items():
        if not os.path.isfile(source):
            raise EstimatorError('%s: assets_extra[%r] is %s, which is no file'
                                 % (what, inside, source))
    checkpoint = estimator._readable_checkpoint(checkpoint_path, what)
    settings = estimator._warm_start_settings
    if checkpoint is None and settings is not None:
        checkpoint = os.fsdecode(settings.ckpt_to_initialize_from)
        if os.path.isdir(checkpoint):
            checkpoint = tf.train.latest_checkpoint(checkpoint)
    if checkpoint is None:
        raise EstimatorError("Couldn't find trained model at %s." % estimator.model_dir)
    return checkpoint, export.get_timestamped_export_dir(export_dir_base).decode()


def export_serving(estimator, export_dir_base, receiver_fn, assets_extra, as_text,
                   checkpoint_path):
    """`Estimator.export_saved_model` of the PREDICT graph: written through
    `towers.export.save`.

    Returns:
      The SavedModel's folder, as bytes.
    """
    checkpoint, export_dir = _checkpoint_and_dir(estimator, checkpoint_path, export_dir_base,
                                                 assets_extra, 'export_saved_model')
    export_lib.save(export.serving(estimator._call_model_fn, receiver_fn, ModeKeys.PREDICT,
                                   'the model of %s' % estimator.model_dir),
                    checkpoint, export_dir, as_text=as_text, assets_extra=assets_extra)
    return export_dir.encode()


def export_all(estimator, export_dir_base, receiver_fns, assets_extra=None, as_text=False,
               checkpoint_path=None, strip_default_attrs=True):
    """`Estimator.experimental_export_all_saved_models`: one SavedModel with a graph per mode
    of `receiver_fns`.

    Args:
      estimator: the `Estimator`.
      export_dir_base: the folder of the SavedModel's new folder.
      receiver_fns: dict `ModeKeys` value -> a function of no arguments returning the
        mode's receiver (a `SupervisedInputReceiver` for TRAIN and EVAL, a
        `ServingInputReceiver` for PREDICT).
      assets_extra, as_text, checkpoint_path: as `Estimator.export_saved_model`'s.
      strip_default_attrs: whether the graphs leave out attributes at their default values.

    Returns:
      The SavedModel's folder, as bytes.

    Raises:
      EstimatorError: `receiver_fns` names none of the modes; a graph has variables the
        checkpoint lacks.
    """
    modes = [mode for mode in _MODES if receiver_fns.get(mode)]
    if not modes:
        raise EstimatorError('No valid modes for exporting found. Got %s: expected keys of '
                             'tf.estimator.ModeKeys' % sorted(receiver_fns))
    checkpoint, export_dir = _checkpoint_and_dir(estimator, checkpoint_path, export_dir_base,
                                                 assets_extra, 'export_saved_model')
    seed = estimator.config.tf_random_seed

    def fill(staging):
        builder = tf.saved_model.Builder(staging)
        for mode in modes:
            with tf.Graph().as_default() as graph:
                if seed is not None:
                    graph.seed = seed
                _add_graph(builder, estimator._call_model_fn, receiver_fns[mode], mode,
                           checkpoint, estimator._session_config, first=mode == modes[0],
                           strip_default_attrs=strip_default_attrs)
        builder.save(as_text)
        for inside, source in (assets_extra or {}).items():
            target = os.path.join(staging, 'assets.extra', inside)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(source, target)

    check_new_directory(export_dir, 'export_dir')
    files.write_directory_atomically(export_dir, fill)
    return export_dir.encode()


def _add_graph(builder, call_model_fn, receiver_fn, mode, checkpoint, session_config, first,
               strip_default_attrs):
    """Builds the graph of `mode` in the default graph, restores it and adds it to `builder`
    (with the variables when `first`)."""
    tf.train.get_or_create_global_step()
    receiver = receiver_fn()
    spec = call_model_fn(receiver.features, getattr(receiver, 'labels', None), mode)
    outputs = export.export_outputs_for_mode(
        mode, serving_export_outputs=spec.export_outputs, predictions=spec.predictions,
        loss=spec.loss, metrics=spec.eval_metric_ops or None)
    signature_defs = export.build_all_signature_defs(
        receiver.receiver_tensors, outputs,
        getattr(receiver, 'receiver_tensors_alternatives', None),
        serving_only=mode == ModeKeys.PREDICT)
    scaffold = spec.scaffold
    local_init = (scaffold.local_init_op if scaffold.local_init_op is not None
                  else tf.train.Scaffold.default_local_init_op())
    saver = scaffold.saver or tf.train.Saver(sharded=True)
    if spec.train_op is not None:
        tf.add_to_collection(_TRAIN_OP_KEY, spec.train_op)
    with tf.Session(config=session_config) as session:
        try:
            saver.restore(session, checkpoint)
        except tf.errors.NotFoundError as err:
            raise EstimatorError(
                'Could not load all requested variables from checkpoint. Please make sure '
                'your model_fn does not expect variables that were not saved in the '
                'checkpoint.\n\nEncountered error with mode `%s` while restoring checkpoint '
                'from: `%s`: %s' % (mode, checkpoint, err.message.splitlines()[0]))
        arguments = dict(tags=export.EXPORT_TAG_MAP[mode], signature_def_map=signature_defs,
                         assets_collection=tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS),
                         main_op=local_init, saver=saver,
                         strip_default_attrs=strip_default_attrs)
        if first:
            builder.add_meta_graph_and_variables(session, **arguments)
        else:
            builder.add_meta_graph(**arguments)
