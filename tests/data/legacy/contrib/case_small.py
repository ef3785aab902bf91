"""tf.contrib's small pieces on the same inputs and weights (run_cases.py): image transforms and
warps, signal, stateless random numbers, util, and summary files written by tf.contrib.summary
read back event by event (tags, steps, values)."""
import glob
import os
import sqlite3
import tempfile

import numpy as np
import tensorflow as tf


def pictures(shape=(2, 5, 6, 3), seed=0):
    return np.random.RandomState(seed).uniform(0, 1, shape).astype(np.float32)


def trained(fetches, *tensors):
    """`fetches` with a train op on the squares of `tensors`."""
    loss = tf.add_n([tf.reduce_sum(tf.square(t)) for t in tensors])
    fetches['train_op'] = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
    return fetches


def transforms():
    """transform, rotate and translate (NEAREST and BILINEAR, every rank) and the transform
    helpers; gradients of a bilinear transform to the image."""
    image = tf.get_variable('image', [2, 5, 6, 3])
    flat = tf.constant([[0.9, -0.3, 1.2, 0.25, 1.1, -0.7, 0.01, -0.02],
                        [1.0, 0.0, -1.5, 0.0, 1.0, 0.5, 0.0, 0.0]])
    rotations = tf.contrib.image.angles_to_projective_transforms([0.3, -1.2], 5.0, 6.0)
    shifts = tf.contrib.image.translations_to_projective_transforms([[1.0, -2.0], [0.5, 0.25]])
    composed = tf.contrib.image.compose_transforms(rotations, shifts, flat)
    fixed = tf.constant(pictures())
    uint8 = tf.constant((pictures(seed=1) * 255).astype(np.uint8))
    bilinear = tf.contrib.image.transform(image, composed, interpolation='BILINEAR')
    return trained({
        'rotations': rotations, 'shifts': shifts, 'composed': composed,
        'matrices': tf.contrib.image.flat_transforms_to_matrices(flat[0]),
        'flat': tf.contrib.image.matrices_to_flat_transforms(
            2.0 * tf.contrib.image.flat_transforms_to_matrices(flat)),
        'bilinear': bilinear,
        'nearest': tf.contrib.image.transform(fixed, flat, output_shape=[7, 4]),
        'lower_case': tf.contrib.image.transform(fixed[0], flat[0], interpolation='bilinear'),
        'uint8': tf.contrib.image.transform(uint8, flat[1]),
        'rotate': tf.contrib.image.rotate(fixed, [0.3, -1.2], interpolation='BILINEAR'),
        'rotate_3d': tf.contrib.image.rotate(fixed[1], 2.0),
        'rotate_2d': tf.contrib.image.rotate(fixed[0, :, :, 0], -0.7, interpolation='BILINEAR'),
        'translate': tf.contrib.image.translate(fixed, [1.5, -0.5], interpolation='BILINEAR'),
        'translate_each': tf.contrib.image.translate(uint8, [[1.0, 2.0], [-2.0, 0.0]]),
    }, bilinear)


def warps():
    """dense_image_warp with gradients to image and flow, interpolate_spline of each order,
    sparse_image_warp with and without pinned borders."""
    image = tf.get_variable('image', [2, 5, 6, 3])
    flow = tf.get_variable('flow', [2, 5, 6, 2]) * 2.0
    warped = tf.contrib.image.dense_image_warp(image, flow)
    # float64 where float32 rounding, amplified by the ill-conditioned spline systems, would
    # tell TensorFlow 2's solver from TF 1.15's rather than the formulas.
    rng = np.random.RandomState(2)
    points = tf.constant(rng.uniform(0, 4, (2, 5, 2)))
    values = tf.constant(rng.standard_normal((2, 5, 3)))
    queries = tf.constant(rng.uniform(0, 4, (2, 7, 2)))
    fetches = {'warped': warped, 'spline_float32': tf.contrib.image.interpolate_spline(
        tf.cast(points, tf.float32), tf.cast(values, tf.float32), tf.cast(queries, tf.float32),
        1)}
    for order in (1, 2, 3, 4, 6):
        fetches['spline_%d' % order] = tf.contrib.image.interpolate_spline(
            points, values, queries, order)
    fetches['spline_regularized'] = tf.contrib.image.interpolate_spline(
        points, values, queries, 2, regularization_weight=0.1)
    source = tf.constant([[[1.0, 1.0], [3.0, 4.0], [2.0, 1.0]],
                          [[2.0, 2.0], [1.0, 4.0], [3.0, 3.0]]], tf.float64)
    moved = source + tf.constant([[[0.5, 0.5], [-1.0, 0.0], [0.0, 0.0]],
                                  [[0.0, 1.0], [1.0, -0.5], [-0.5, 0.0]]], tf.float64)
    fixed = tf.constant(pictures(seed=3).astype(np.float64))
    fetches['sparse'], fetches['sparse_flow'] = tf.contrib.image.sparse_image_warp(
        fixed, source, moved)
    fetches['pinned'], fetches['pinned_flow'] = tf.contrib.image.sparse_image_warp(
        fixed, source, moved, interpolation_order=3, regularization_weight=0.01,
        num_boundary_points=2)
    return trained(fetches, warped)


def signal():
    """A speech front end (stft, mel matrix, MFCCs) with gradients to the waveform, and the
    framing, windows and inverse STFT on their own."""
    waveform = tf.get_variable('waveform', [2, 160])
    spectrogram = tf.contrib.signal.stft(waveform, frame_length=32, frame_step=16,
                                         fft_length=32, pad_end=True)
    mel = tf.contrib.signal.linear_to_mel_weight_matrix(
        num_mel_bins=6, num_spectrogram_bins=17, sample_rate=8000, lower_edge_hertz=20.0,
        upper_edge_hertz=3900.0)
    log_mel = tf.log(tf.matmul(tf.abs(spectrogram), mel) + 1.0)
    mfccs = tf.contrib.signal.mfccs_from_log_mel_spectrograms(log_mel)[..., :4]
    signals = tf.constant(np.random.RandomState(4).standard_normal((2, 64)).astype(np.float32))
    hamming = lambda length, dtype: tf.contrib.signal.hamming_window(length, dtype=dtype)
    stfts = tf.contrib.signal.stft(signals, 16, 8, window_fn=hamming)
    frames = tf.contrib.signal.frame(tf.reshape(signals, [2, 16, 4]), 5, 3, pad_end=True,
                                     pad_value=-1.0, axis=1)
    return trained({
        'spectrogram_abs': tf.abs(spectrogram), 'mel': mel, 'mfccs': mfccs,
        'stfts_abs': tf.abs(stfts), 'frames': frames,
        'overlap_add': tf.contrib.signal.overlap_and_add(tf.reshape(signals, [2, 8, 8]), 5),
        'inverse': tf.contrib.signal.inverse_stft(
            tf.contrib.signal.stft(signals, 16, 4), 16, 4,
            window_fn=tf.contrib.signal.inverse_stft_window_fn(4)),
        'hann': tf.contrib.signal.hann_window(9),
        'hann_symmetric': tf.contrib.signal.hann_window(9, periodic=False),
        'hamming64': tf.contrib.signal.hamming_window(7, dtype=tf.float64),
    }, 0.1 * mfccs)


def stateless():
    """Each stateless op with int32 and int64 seeds, dtypes and bounds."""
    seed = tf.constant([7, 17], tf.int64)
    logits = tf.log([[0.2, 0.3, 0.5], [0.9, 0.05, 0.05]])
    return {
        'uniform': tf.contrib.stateless.stateless_random_uniform([3, 4], seed=seed),
        'uniform_range': tf.contrib.stateless.stateless_random_uniform(
            [5], seed=[1, 2], minval=-2.0, maxval=3.0, dtype=tf.float64),
        'uniform_int': tf.contrib.stateless.stateless_random_uniform(
            [6], seed=[9, 9], minval=-3, maxval=10, dtype=tf.int32),
        'uniform_int64': tf.contrib.stateless.stateless_random_uniform(
            [2, 2], seed=seed, maxval=1 << 40, dtype=tf.int64),
        'normal': tf.contrib.stateless.stateless_random_normal([5], seed=[1, 2], mean=1.0,
                                                               stddev=2.0),
        'truncated': tf.contrib.stateless.stateless_truncated_normal([2, 3], seed=[3, 4],
                                                                     dtype=tf.float64),
        'multinomial': tf.contrib.stateless.stateless_multinomial(logits, 6, seed=[5, 6]),
        'multinomial32': tf.contrib.stateless.stateless_multinomial(
            logits, 4, seed=seed, output_dtype=tf.int32),
    }


def util():
    """Tensor protos both ways, constant folding, and the ops of a small GraphDef."""
    proto = tf.contrib.util.make_tensor_proto([[1.5, 2.0], [3.0, 4.5]], dtype=tf.float32)
    scalar = tf.contrib.util.make_tensor_proto(7, shape=[3])
    shape = tf.shape(tf.zeros([2, 5]))
    folded = tf.contrib.util.constant_value(tf.concat([shape, [7]], 0))
    doubled = tf.contrib.util.constant_value(shape * 2)
    unknown = tf.contrib.util.constant_value(tf.placeholder(tf.float32))
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        tf.nn.relu(tf.matmul(x, tf.ones([3, 2])) + 1.0)
    graph_def = graph.as_graph_def()
    stripped = tf.contrib.util.stripped_op_list_for_graph(graph_def)
    return {
        'proto': tf.constant(tf.contrib.util.make_ndarray(proto)),
        'proto_dtype': tf.constant(proto.dtype), 'proto_shape': tf.constant(
            [d.size for d in proto.tensor_shape.dim]),
        'filled': tf.constant(tf.contrib.util.make_ndarray(scalar)),
        'folded': tf.constant(folded), 'unknown': tf.constant(unknown is None),
        'doubled_folds': tf.constant(doubled is not None),
        'post': lambda values: {
            'ops_used': np.array(sorted(tf.contrib.util.ops_used_by_graph_def(graph_def))),
            'stripped': np.array([op.name for op in stripped.op])},
    }


def event_record(path):
    """Every event of the event files under `path`, sorted: kinds, steps, and values by tag."""
    events = [event for name in sorted(glob.glob(os.path.join(path, 'events.out.*')))
              for event in tf.train.summary_iterator(name)]
    rows, out = [], {}
    for event in events:
        if event.HasField('file_version'):
            rows.append((event.step, 'file_version ' + event.file_version))
        elif event.HasField('graph_def'):
            rows.append((event.step, 'graph'))
        for value in event.summary.value:
            rows.append((event.step, 'summary ' + value.tag))
            key = 'tag/%s/step%d/' % (value.tag, event.step)
            kind = value.WhichOneof('value')
            out[key + 'kind'] = np.array(kind)
            if kind == 'simple_value':
                out[key + 'value'] = np.float32(value.simple_value)
            elif kind == 'histo':
                histogram = value.histo
                out[key + 'histogram'] = np.array(
                    [histogram.min, histogram.max, histogram.num, histogram.sum,
                     histogram.sum_squares] + list(histogram.bucket_limit)
                    + list(histogram.bucket))
            elif kind == 'image':
                out[key + 'image'] = np.array([value.image.height, value.image.width,
                                               value.image.colorspace])
            elif kind == 'audio':
                out[key + 'audio'] = np.array([value.audio.sample_rate,
                                               value.audio.num_channels,
                                               value.audio.length_frames])
                out[key + 'wav'] = np.frombuffer(value.audio.encoded_audio_string, np.uint8)
            elif kind == 'tensor':
                out[key + 'tensor'] = tf.make_ndarray(value.tensor)
                out[key + 'plugin'] = np.array(value.metadata.plugin_data.plugin_name)
    rows.sort()
    out['event_steps'] = np.array([step for step, _ in rows], np.int64)
    out['event_kinds'] = np.array([kind for _, kind in rows])
    return out


def summary():
    """A model_fn's summaries under a file writer and the recording conditions, written by
    all_summary_ops before and after training, the writer initialized and flushed as
    TPUEstimator's host call did, plus the graph, an imported event and a second writer."""
    logdir, other_logdir = tempfile.mkdtemp(), tempfile.mkdtemp()
    step = tf.train.get_or_create_global_step()
    weights = tf.get_variable('weights', [2, 3])
    loss = tf.reduce_sum(tf.square(weights))
    writer = tf.contrib.summary.create_file_writer(logdir, max_queue=5, flush_millis=10000)
    with writer.as_default():
        with tf.contrib.summary.always_record_summaries():
            tf.contrib.summary.scalar('loss', loss)
            tf.contrib.summary.histogram('weights', weights, family='params')
            tf.contrib.summary.image('picture', tf.constant(pictures()), max_images=1)
            tf.contrib.summary.audio('sound', tf.sin(tf.range(40.0) / 3.0)[None, :, None],
                                     sample_rate=8000, max_outputs=1)
            tf.contrib.summary.generic('raw', tf.constant([[1.0, 2.0]]), step=7)
            with tf.name_scope('tower_0'):
                tf.contrib.summary.scalar('in_scope', loss * 2, step=step + 100)
            recording = tf.contrib.summary.should_record_summaries()
        with tf.contrib.summary.never_record_summaries():
            tf.contrib.summary.scalar('never', loss)
            not_recording = tf.contrib.summary.should_record_summaries()
        with tf.contrib.summary.record_summaries_every_n_global_steps(2):
            tf.contrib.summary.scalar('every_2', loss)
    imported = tf.Event(step=42, summary=tf.Summary(value=[
        tf.Summary.Value(tag='imported', simple_value=3.5)]))
    with writer.as_default():
        import_op = tf.contrib.summary.import_event(
            tf.constant(imported.SerializeToString()))
    other = tf.contrib.summary.create_summary_file_writer(other_logdir, name='other')
    with other.as_default(), tf.contrib.summary.always_record_summaries():
        tf.contrib.summary.scalar('other_loss', loss + 1.0, step=5)
    summary_ops = tf.contrib.summary.all_summary_ops()
    init_ops = tf.contrib.summary.summary_writer_initializer_op()
    flushes = [tf.contrib.summary.flush(writer=op.inputs[0]) for op in init_ops]

    def post(values):
        session = tf.get_default_session()
        session.run(init_ops)
        with writer.as_default():
            tf.contrib.summary.initialize(graph=tf.get_default_graph(), session=session)
        session.run(summary_ops)
        session.run(import_op)
        session.run(flushes)
        out = {'main/' + key: value for key, value in event_record(logdir).items()}
        out.update({'other/' + key: value for key, value in event_record(other_logdir).items()})
        out['eval_dirs'] = np.array([tf.contrib.summary.eval_dir('/model'),
                                     tf.contrib.summary.eval_dir('/m', 'test')])
        return out

    fetches = trained({'recording': recording, 'not_recording': not_recording,
                       'ops': tf.constant(len(summary_ops)),
                       'is_writer': tf.constant(
                           isinstance(writer, tf.contrib.summary.SummaryWriter)),
                       'post': post}, loss)
    fetches['train_op'] = tf.group(fetches['train_op'], tf.assign_add(step, 1))
    return fetches


def summary_db():
    """A scalar written through create_db_writer, read back from the SQLite database."""
    path = os.path.join(tempfile.mkdtemp(), 'runs.sqlite')
    writer = tf.contrib.summary.create_db_writer('file:' + path, experiment_name='exp',
                                                 run_name='run', user_name='someone')
    with writer.as_default(), tf.contrib.summary.always_record_summaries():
        written = tf.contrib.summary.scalar('loss', tf.constant(2.5), step=3)
        flush = tf.contrib.summary.flush()

    def post(values):
        session = tf.get_default_session()
        session.run(tf.contrib.summary.summary_writer_initializer_op())
        session.run(written)
        session.run(flush)
        database = sqlite3.connect(path)
        names = database.execute('SELECT experiment_name FROM Experiments').fetchall()
        names += database.execute('SELECT run_name FROM Runs').fetchall()
        names += database.execute('SELECT tag_name FROM Tags').fetchall()
        rows = database.execute('SELECT step, dtype, shape, data FROM Tensors '
                                'WHERE step IS NOT NULL').fetchall()
        database.close()
        return {'names': np.array([name for name, in names]),
                'steps': np.array([row[0] for row in rows], np.int64),
                'dtypes': np.array([row[1] for row in rows], np.int64),
                'data': np.array([np.frombuffer(row[3], np.float32)[0] for row in rows])}

    return {'is_writer': tf.constant(isinstance(writer, tf.contrib.summary.SummaryWriter)),
            'post': post}


CASES = {'transforms': transforms, 'warps': warps, 'signal': signal, 'stateless': stateless,
         'util': util, 'summary': summary, 'summary_db': summary_db}
