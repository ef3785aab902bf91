"""`towers-legacy export`: a TF1 program's checkpoint as a SavedModel that TensorFlow 2 loads.

    towers-legacy export --meta_graph /tmp/train/model.ckpt-20.meta \
        --inputs images:split:0 --outputs logits:tower_0/logits/BiasAdd:0 --export_dir /tmp/out

The graph is the one `tf.train.Saver` wrote beside its checkpoint (the `.meta` file), imported
with its devices cleared (a tower program places its ops on '/gpu:i'); its variables are restored
from the checkpoint of the same prefix (or `--checkpoint`), and the SavedModel has one signature,
`serving_default`, from the named input tensors to the named output tensors. `--inputs` and
`--outputs` take NAME:TENSOR pairs, comma-separated or repeated; a tensor is named as in the
graph ('tower_0/logits/BiasAdd:0', or an op's name for its first output). Any tensor can be an
input (a placeholder, or what an input queue gives the towers, e.g. the batch's split); the
SavedModel computes the outputs from the inputs alone. A name that is not in the graph is one
`error:` line naming it and the graph's closest names.

`export` is the runner's subcommand when it is the first argument and no file is called
`export` (then that script runs, as before: `towers-legacy ./export` runs it in any case).
"""
import argparse
import difflib
import os

from towers import export
from towers.compat import tf
from towers.errors import TowersError
from towers.flags import FlagParser, checkpoint_prefix, output_dir

COMMAND = 'export'
META_SUFFIX = '.meta'


def is_command(argv):
    """Whether the runner's arguments `argv` ask for this subcommand rather than a script."""
    return bool(argv) and argv[0] == COMMAND and not os.path.isfile(COMMAND)


def _pairs(text):
    """Flag type: NAME:TENSOR[,NAME:TENSOR...] -> [(name, tensor)]."""
    pairs = [item.strip().split(':', 1) for item in text.split(',') if item.strip()]
    bad = [':'.join(pair) for pair in pairs if len(pair) < 2 or not all(pair)]
    if bad or not pairs:
        raise argparse.ArgumentTypeError('expected NAME:TENSOR pairs such as images:input:0, '
                                         'got %r' % text)
    return [tuple(pair) for pair in pairs]


def parse_args(argv):
    """The subcommand's flags (after `export`), checked."""
    parser = FlagParser(prog='towers-legacy export',
                        description='Writes a TF1 program\'s checkpoint as a SavedModel.')
    parser.add_argument('--meta_graph', required=True,
                        help='The .meta file tf.train.Saver wrote, e.g. model.ckpt-1000.meta.')
    parser.add_argument('--checkpoint', type=checkpoint_prefix,
                        help='The checkpoint prefix to restore (default: the --meta_graph file '
                             'without .meta).')
    for flag, what in (('inputs', 'fed'), ('outputs', 'returned')):
        parser.add_argument('--' + flag, type=_pairs, action='append', required=True,
                            help='NAME:TENSOR pairs %s by the signature, comma-separated or '
                                 'repeated.' % what)
    parser.add_argument('--export_dir', required=True, type=output_dir,
                        help='The SavedModel\'s directory: new, or empty.')
    args = parser.parse_args(argv)
    if not os.path.isfile(args.meta_graph):
        raise TowersError('--meta_graph %s is not a file (expected the .meta file tf.train.Saver '
                          'writes beside a checkpoint, e.g. model.ckpt-1000.meta)'
                          % args.meta_graph)
    if args.checkpoint is None:
        args.checkpoint = checkpoint_prefix_of(args.meta_graph)
    return args


def checkpoint_prefix_of(meta_graph):
    """The checkpoint beside the `.meta` file `meta_graph`: its prefix.

    Raises:
      TowersError: there is no such checkpoint (its `.index` file is missing).
    """
    prefix = meta_graph[:-len(META_SUFFIX)] if meta_graph.endswith(META_SUFFIX) else meta_graph
    if not os.path.isfile(prefix + '.index'):
        raise TowersError('--meta_graph %s has no checkpoint beside it (no %s.index): give its '
                          'prefix with --checkpoint' % (meta_graph, prefix))
    return prefix


def _tensor(graph, flag, name, tensor_name):
    """The tensor `tensor_name` (or an op's first output) of `graph`, given as NAME:TENSOR."""
    full_name = tensor_name if ':' in tensor_name else tensor_name + ':0'
    try:
        return graph.get_tensor_by_name(full_name)
    except (KeyError, ValueError):
        names = [tensor.name for op in graph.get_operations() for tensor in op.outputs]
        closest = difflib.get_close_matches(full_name, names, n=3, cutoff=0.5)
        raise TowersError('--%s %s:%s: the graph has no tensor %s%s' % (
            flag, name, tensor_name, full_name,
            '; the closest: %s' % ', '.join(closest) if closest else ''))


def serving(meta_graph, inputs, outputs):
    """The `towers.export.Serving` of the graph of `meta_graph` from `inputs` to `outputs`
    (lists of (name, tensor name)); every global variable restored."""
    def build():
        try:
            tf.train.import_meta_graph(meta_graph, clear_devices=True)
        except (OSError, ValueError, tf.errors.OpError) as err:
            raise TowersError('cannot import --meta_graph %s: %s' % (meta_graph, err))
        graph = tf.get_default_graph()
        return tuple({name: _tensor(graph, flag, name, tensor) for name, tensor in pairs}
                     for flag, pairs in (('inputs', inputs), ('outputs', outputs)))

    return export.Serving(build, 'the graph of %s' % meta_graph)


def main(argv):
    """Runs the subcommand on its flags `argv`; prints one line; returns the exit status."""
    args = parse_args(argv)
    inputs, outputs = ([pair for pairs in flagged for pair in pairs]
                       for flagged in (args.inputs, args.outputs))
    signature = export.save(serving(args.meta_graph, inputs, outputs), args.checkpoint,
                            args.export_dir)
    print('%s: wrote the SavedModel %s; serving_default: %s'
          % (os.path.basename(args.checkpoint), args.export_dir, signature))
    return 0
