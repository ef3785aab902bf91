"""A network restored from a checkpoint, written as a SavedModel with one serving signature.

    serving = Serving(build, what='the CIFAR-10 model', var_list=cifar10.variables_to_restore)
    signature = save(serving, checkpoint, '/tmp/cifar10_export')
    print(signature)        # images uint8 [?, 32, 32, 3] -> classes int64 [?], probabilities ...

The network is built in a graph of its own from the placeholders `build` makes (any batch size,
the model's preprocessing inside), restored as the evaluation restores it
(`towers.evaluation.Restored`: moving averages where `var_list` says so), and written with
`tf.compat.v1.saved_model.Builder`, devices cleared, under the tag `serve` and the signature
`serving_default` (TensorFlow Serving's predict method), so that TensorFlow 2 loads it eagerly:
`tf.saved_model.load(export_dir).signatures['serving_default'](images=...)`.

Its stages (the restore, the SavedModel, the Keras outputs) show their progress
(`towers.bars`). Every output appears whole or not at all: a directory is filled beside its
place and renamed into it, and a directory that exists and is not empty is refused, as the
builder refuses it.
A Keras model's weights (`keras_out`, Keras' `.weights.h5`) and TF2 object-based checkpoint
(`tf2_checkpoint_dir`) load into the same architecture built in plain `tf_keras`.
"""
import collections
import os
import shutil
import subprocess
import sys
import tempfile

from towers import bars, files
from towers.compat import tf
from towers.errors import TowersError
from towers.evaluation.choice import require_variables
from towers.evaluation.restore import Restored

SIGNATURE_KEY = 'serving_default'
# The folder of a SavedModel that holds files beside its assets (TensorFlow Serving's warm-up).
ASSETS_EXTRA = 'assets.extra'
KERAS_SUFFIX = '.weights.h5'
# The TF2 checkpoint's prefix inside its directory (`tf.train.Checkpoint.save` numbers it).
TF2_PREFIX = 'ckpt'
KERAS_WEIGHTS_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    'keras_weights.py')

Serving = collections.namedtuple('Serving', ['build', 'what', 'var_list', 'keras_model',
                                             'signature_defs'], defaults=(None, None, None))
Serving.__doc__ = """What a network serves, and how it is restored.

Attributes:
  build: a function of no arguments that builds the network in inference mode (batch norm on
    its moving statistics, no dropout) in the default graph and returns (inputs, outputs):
    dicts from the signature's names to the placeholders a user feeds (first dimension None)
    and to the tensors returned.
  what: what a checkpoint must be, for errors, e.g. 'the CIFAR-10 model'.
  var_list: a function of no arguments, called after `build`, returning the `tf.train.Saver`
    var list to restore (e.g. moving averages into the variables); None: every global
    variable under its own name.
  keras_model: a function of no arguments, called after `build`, returning the `keras.Model`
    whose weights `keras_out` writes; None for a network that is no Keras model.
  signature_defs: a function of no arguments, called after `build`, returning the SavedModel's
    signatures (dict key -> `SignatureDef`, one of them 'serving_default'), as a TF1 Estimator's
    `export_outputs` make several; None: 'serving_default' alone, a predict signature from
    the inputs to the outputs.
"""


class Signature(collections.namedtuple('Signature', ['inputs', 'outputs'])):
    """The `serving_default` signature written: `inputs` and `outputs` are dicts from names to
    `tf.TensorSpec`s (None in a shape: any size)."""

    def __str__(self):
        def specs(named):
            return ', '.join('%s %s [%s]' % (name, spec.dtype.name, ', '.join(
                '?' if size is None else str(size) for size in spec.shape.as_list()))
                for name, spec in sorted(named.items()))
        return '%s -> %s' % (specs(self.inputs), specs(self.outputs))


def classified(probabilities, logits=None):
    """The outputs of a classifier: 'probabilities' [b, classes] as given, 'classes' [b]
    int64, the index of the most probable class, and the 'logits' [b, classes] when given."""
    outputs = {'probabilities': probabilities,
               'classes': tf.argmax(probabilities, axis=1, name='classes')}
    if logits is not None:
        outputs['logits'] = logits
    return outputs


def check_new_directory(path, flag):
    """Raises `TowersError` naming `flag` unless `path` is missing or an empty directory."""
    if os.path.isdir(path) and os.listdir(path):
        raise TowersError('%s %s already exists and is not empty: give a new directory (or '
                          'remove that one)' % (flag, path))
    if os.path.lexists(path) and not os.path.isdir(path):
        raise TowersError('%s %s is a file: expected a new directory' % (flag, path))


def _check_keras_out(path, serving):
    if serving.keras_model is None:
        raise TowersError('%s is no Keras model: it has no Keras weights or TF2 checkpoint to '
                          'write (leave out --keras_out and --tf2_checkpoint_dir)'
                          % serving.what)
    if path is None:
        return
    if not path.endswith(KERAS_SUFFIX):
        raise TowersError('--keras_out %s: expected a file name ending in %s, which Keras\' '
                          'load_weights reads' % (path, KERAS_SUFFIX))
    if not os.path.isdir(os.path.dirname(os.path.abspath(path))) or os.path.isdir(path):
        raise TowersError('--keras_out %s: expected a file in an existing directory' % path)


def save(serving, checkpoint, export_dir, keras_out=None, tf2_checkpoint_dir=None,
         as_text=False, assets_extra=None):
    """Writes the network of `serving`, restored from `checkpoint`, as a SavedModel.

    Args:
      serving: a `Serving`.
      checkpoint: the checkpoint prefix to restore, e.g. '/tmp/train/model.ckpt-1000'.
      export_dir: the SavedModel's directory: new, or empty.
      keras_out: a file '<name>.weights.h5' for the Keras model's weights, or None.
      tf2_checkpoint_dir: a new (or empty) directory for a TF2 object-based checkpoint of the
        Keras model (`tf.train.Checkpoint(model=...)`, prefix 'ckpt-1'), or None.
      as_text: write the graph as `saved_model.pbtxt` instead of `saved_model.pb`.
      assets_extra: dict path inside the SavedModel's `assets.extra` folder -> a file to
        copy there (a TF1 Estimator's vocabularies, a TensorFlow Serving warm-up file).

    Returns:
      The `Signature` of `serving_default`.

    Raises:
      TowersError: an output exists (a non-empty directory) or is misnamed; the checkpoint
        lacks variables of the network (naming them); a Keras output for a network that is no
        Keras model.
    """
    check_new_directory(export_dir, '--export_dir')
    if keras_out or tf2_checkpoint_dir:
        _check_keras_out(keras_out, serving)
    if tf2_checkpoint_dir:
        check_new_directory(tf2_checkpoint_dir, '--tf2_checkpoint_dir')

    def build():
        # Resource variables, which TensorFlow 2 loads as `tf.Variable`s of the loaded object.
        with tf.variable_scope(tf.get_variable_scope(), use_resource=True):
            inputs, outputs = serving.build()
        var_list = tf.global_variables() if serving.var_list is None else serving.var_list()
        require_variables(checkpoint, var_list if isinstance(var_list, dict)
                          else [_saved_name(variable) for variable in var_list], serving.what)
        return inputs, outputs

    keras = bool(keras_out or tf2_checkpoint_dir)
    with bars.bar(2 + keras, 'export', 'stages') as progress, \
            Restored(build, checkpoint, var_list=serving.var_list) as net:
        progress.update()
        inputs, outputs = net.outputs
        with net.graph.as_default():
            signature_defs = (serving.signature_defs() if serving.signature_defs else {
                SIGNATURE_KEY: tf.saved_model.predict_signature_def(inputs, outputs)})
            _write_directory(export_dir, '--export_dir',
                             lambda staging: _write_saved_model(net.session, signature_defs,
                                                                staging, as_text, assets_extra))
            progress.update()
            if keras:
                _write_keras(serving.keras_model(), net.session, keras_out, tf2_checkpoint_dir)
                progress.update()
    return Signature(*({name: tf.TensorSpec(tensor.shape, tensor.dtype)
                        for name, tensor in tensors.items()} for tensors in (inputs, outputs)))


def _saved_name(variable):
    """The name `variable` has in a checkpoint: a partition's is its whole variable's."""
    info = getattr(variable, '_save_slice_info', None)
    return info.full_name if info else variable.op.name


def _write_directory(path, flag, write):
    """`write(staging)` fills a new directory that then becomes `path`, with the permissions of
    any new directory (readable by a server running as another user)."""
    umask = os.umask(0)
    os.umask(umask)

    def fill(staging):
        os.chmod(staging, 0o777 & ~umask)
        write(staging)

    if not files.write_directory_atomically(path, fill):
        raise TowersError('%s %s was written by another process meanwhile' % (flag, path))


def _write_saved_model(session, signature_defs, directory, as_text=False, assets_extra=None):
    builder = tf.saved_model.Builder(directory)
    # The graph's asset files (a lookup table's vocabulary) go into the SavedModel, as TF 1.x's
    # Estimator put them.
    builder.add_meta_graph_and_variables(
        session, [tf.saved_model.SERVING], signature_def_map=signature_defs,
        assets_collection=tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS), main_op=tf.tables_initializer(), strip_default_attrs=True, clear_devices=True)
    builder.save(as_text)
    for inside, source in (assets_extra or {}).items():
        target = os.path.join(directory, ASSETS_EXTRA, inside)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(source, target)


def _write_keras(model, session, keras_out, tf2_checkpoint_dir):
    """Writes `model`'s TF2 checkpoint into `tf2_checkpoint_dir` and its `.weights.h5` file,
    which a process of plain TensorFlow 2 writes from such a checkpoint."""
    checkpoint = tf.train.Checkpoint(model=model)
    if tf2_checkpoint_dir:
        _write_directory(tf2_checkpoint_dir, '--tf2_checkpoint_dir',
                         lambda staging: checkpoint.save(os.path.join(staging, TF2_PREFIX),
                                                         session=session))
    if not keras_out:
        return
    name = os.path.basename(keras_out)
    with tempfile.TemporaryDirectory(prefix='.%s.' % name,
                                     dir=os.path.dirname(os.path.abspath(keras_out))) as work:
        prefix = (tf.train.latest_checkpoint(tf2_checkpoint_dir) if tf2_checkpoint_dir
                  else checkpoint.save(os.path.join(work, TF2_PREFIX), session=session))
        model_json = os.path.join(work, 'model.json')
        with open(model_json, 'w') as f:
            f.write(model.to_json())
        written = subprocess.run(
            [sys.executable, KERAS_WEIGHTS_SCRIPT, model_json, prefix, os.path.join(work, name)],
            capture_output=True, text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL='2'))
        if written.returncode:
            cause = (written.stderr.strip().splitlines() or ['status %d' % written.returncode])[-1]
            raise TowersError('cannot write --keras_out %s: %s'
                              % (keras_out, cause[len('error: '):] if cause.startswith('error: ')
                                 else cause))
        os.replace(os.path.join(work, name), keras_out)
