"""`tf.contrib.summary` of TF 1.13-1.15 in graph mode: summary writers that are resources in the
graph, and summary ops that write to the default writer when recording is on, as TPU host calls
and Estimator model_fns used them:

    writer = tf.contrib.summary.create_file_writer(model_dir, flush_millis=10000)
    with writer.as_default(), tf.contrib.summary.always_record_summaries():
        tf.contrib.summary.scalar('loss', loss, step=global_step)
    ...
    tf.contrib.summary.initialize(graph=tf.get_default_graph(), session=session)
    session.run([train_op, tf.contrib.summary.all_summary_ops()])

TensorFlow 2 still has these functions (`summary_ops_v2`), and the same kernels write the same
events; `graph` and `flush` are its TF 1.x versions (`graph_v1`, `legacy_raw_flush`, which
takes a writer's resource tensor too). `create_db_writer`, which TensorFlow 2 no longer offers
in Python, is written here on its kernel, which it still has. One difference: without a default
writer `should_record_summaries()` is False, where TF 1.15 gave the recording condition (no
summary was written either way).
"""
import functools
import getpass
import re
import time


from towers.compat import internal, tf

gen_summary_ops = internal('ops.gen_summary_ops')
summary_ops_v2 = internal('ops.summary_ops_v2')

SummaryWriter = summary_ops_v2.SummaryWriter
create_file_writer = summary_ops_v2.create_file_writer
create_summary_file_writer = summary_ops_v2.create_summary_file_writer
always_record_summaries = summary_ops_v2.always_record_summaries
never_record_summaries = summary_ops_v2.never_record_summaries
record_summaries_every_n_global_steps = summary_ops_v2.record_summaries_every_n_global_steps
should_record_summaries = summary_ops_v2._legacy_contrib_should_record_summaries
scalar = summary_ops_v2.scalar
histogram = summary_ops_v2.histogram
image = summary_ops_v2.image
audio = summary_ops_v2.audio
generic = summary_ops_v2.generic
graph = summary_ops_v2.graph_v1
import_event = summary_ops_v2.import_event
flush = summary_ops_v2.legacy_raw_flush
all_summary_ops = summary_ops_v2.all_v2_summary_ops
summary_writer_initializer_op = summary_ops_v2.summary_writer_initializer_op
initialize = summary_ops_v2.initialize
eval_dir = summary_ops_v2.eval_dir

# What the database writer accepts for each name (TF 1.15's rules).
_DB_NAME_PATTERNS = {
    'experiment_name': re.compile(r'^[^\x00-\x1F<>]{0,256}$'),
    'run_name': re.compile(r'^[^\x00-\x1F<>]{0,512}$'),
    'user_name': re.compile(r'^[a-z]([-a-z0-9]{0,29}[a-z0-9])?$', re.I),
}


def create_db_writer(db_uri, experiment_name=None, run_name=None, user_name=None, name=None):
    """A writer into an SQLite database (TensorBoard's schema, created when absent), with a
    row each for the user, experiment and run.

    Args:
      db_uri: the database, e.g. 'file:/tmp/run.sqlite'.
      experiment_name: default today's date, YYYY-MM-DD; '' for none.
      run_name: default the time now, HH:MM:SS; '' for none.
      user_name: default the system user; '' for none.
      name: the shared name of the writer's resource.

    Returns:
      A `SummaryWriter`; its initializer is in `summary_writer_initializer_op()`.

    Raises:
      ValueError: a name with control characters or '<>' (a user name: not a valid DNS label
        and Linux user name).
    """
    now = time.localtime(time.time())
    names = {'experiment_name': (time.strftime('%Y-%m-%d', now) if experiment_name is None
                                 else experiment_name),
             'run_name': time.strftime('%H:%M:%S', now) if run_name is None else run_name,
             'user_name': getpass.getuser() if user_name is None else user_name}
    with tf.device('cpu:0'):
        for key, value in names.items():
            if isinstance(value, str) and not _DB_NAME_PATTERNS[key].search(value):
                raise ValueError('create_db_writer: %s (%s) must match %s'
                                 % (key, value, _DB_NAME_PATTERNS[key].pattern))
            names[key] = tf.convert_to_tensor(value, tf.string)
        resource = gen_summary_ops.summary_writer(shared_name=name)
        return summary_ops_v2._LegacyResourceSummaryWriter(
            resource=resource, init_op_fn=functools.partial(
                gen_summary_ops.create_summary_db_writer, db_uri=db_uri, **names))
