"""Specification of the throughput benchmark: its results file, FLOP counting, timing blocks,
targets, and the model registry it measures through."""
import json
import os

import numpy as np
import pytest

import towers
from models import registry
from models.datasets.cifar10 import reader as cifar10_input
from models.datasets.kolektor import synthetic as kolektor_synthetic
from towers import benchmark
from towers.benchmarks import report, suite
from towers.compat import tf


def write_tiny_cifar(data_dir, records_per_file=8):
    rs = np.random.RandomState(0)
    parts = [(rs.randint(0, 256, [records_per_file, 32, 32, 3]),
              rs.randint(0, 10, records_per_file)) for _ in range(6)]
    cifar10_input.write_batches_dir(os.path.join(data_dir, cifar10_input.BATCHES_DIR),
                                    parts[:5], parts[5])


def test_json_holds_each_method_per_device_count_and_the_single_figures(tmp_path):
    write_tiny_cifar(str(tmp_path))
    results_file = tmp_path / 'out' / 'results.json'
    chart = tmp_path / 'out' / 'chart.png'
    results = suite.run(registry.get('cifar10'), batch_size=2, num_gpus=2,
                        data_dir=str(tmp_path), plan=benchmark.Plan(0, 1, 1),
                        configure=towers.configure_devices, matmul_size=16)
    report.save_results(str(results_file), results.rows, results.matmul_rate,
                        results.train_flops_per_example)
    report.save_chart(results.rows, str(chart), 'tiny')
    results = json.loads(results_file.read_text())
    assert set(results) == {'single_device', 'towers', 'mirrored', 'input_only', 'end_to_end',
                            'in_memory_step', 'matmul_flops', 'model_train_flops_per_example'}
    for method in ('single_device', 'towers', 'mirrored'):
        assert set(results[method]) == {'1', '2'}
        assert all(rate > 0 for rate in results[method].values())
    for figure in ('input_only', 'end_to_end', 'in_memory_step', 'matmul_flops'):
        assert results[figure] > 0
    assert results['model_train_flops_per_example'] > 0
    assert chart.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'


@pytest.mark.parametrize('num_gpus, counts', [(1, [1]), (3, [1, 2, 3]), (4, [1, 2, 4]),
                                              (6, [1, 2, 4, 6]), (8, [1, 2, 4, 8])])
def test_device_counts_are_powers_of_two_up_to_num_gpus_and_num_gpus(num_gpus, counts):
    assert suite.device_counts(num_gpus) == counts


def test_flops_of_a_convolution_are_two_per_kernel_weight_per_output_position():
    images = tf.zeros([2, 8, 8, 3])
    kernel = tf.get_variable('kernel', [3, 3, 3, 4])
    conv = tf.nn.conv2d(images, kernel, [1, 1, 1, 1], padding='SAME')
    assert benchmark.count_flops(conv) == 2 * (2 * 8 * 8 * 4) * (3 * 3 * 3)


def test_flops_of_a_kernel_gradient_add_the_forward_pass_but_not_the_images_gradient():
    images = tf.zeros([2, 8, 8, 3])
    kernel = tf.get_variable('kernel', [5, 5, 3, 4])
    conv = tf.nn.conv2d(images, kernel, [1, 2, 2, 1], padding='VALID')
    loss = tf.reduce_sum(tf.square(conv))
    # compute_gradients gates the kernel's gradient on the images' one too, which no update
    # reads: TensorFlow prunes it, and it is not counted.
    (kernel_grad, _), = tf.train.GradientDescentOptimizer(0.1).compute_gradients(loss, [kernel])
    forward = 2 * (2 * 2 * 2 * 4) * (5 * 5 * 3)
    assert benchmark.count_flops(loss) == forward
    assert benchmark.count_flops(kernel_grad) == 2 * forward


def test_flops_of_an_activation_gradient_equal_the_forward_convolution():
    inputs = tf.get_variable('inputs', [2, 8, 8, 3])
    conv = tf.nn.conv2d(inputs, tf.zeros([3, 3, 3, 4]), [1, 1, 1, 1], padding='SAME')
    inputs_grad, = tf.gradients(tf.reduce_sum(conv), [inputs])
    assert benchmark.count_flops(inputs_grad) == 2 * (2 * 8 * 8 * 4) * (3 * 3 * 3)


def test_flops_of_a_matmul_read_the_inner_dimension_through_a_transpose():
    a = tf.zeros([7, 5])
    b = tf.zeros([7, 3])
    assert benchmark.count_flops(tf.matmul(a, b, transpose_a=True)) == 2 * 5 * 3 * 7


def test_flops_in_skipped_scopes_are_left_out_with_their_gradients():
    weights = tf.get_variable('weights', [5, 3])
    with tf.name_scope('norm'):
        normalised = tf.matmul(tf.zeros([7, 5]), tf.ones([5, 5]))
    (grad, _), = tf.train.GradientDescentOptimizer(0.1).compute_gradients(
        tf.reduce_sum(tf.matmul(normalised, weights)), [weights])
    # The weights' gradient is normalised^T times ones: one [5, 7] x [7, 3] product.
    assert benchmark.count_flops(grad, skip_scopes=['norm']) == 2 * 5 * 7 * 3
    assert benchmark.count_flops(grad) == 2 * 5 * 7 * 3 + 2 * 7 * 5 * 5


def test_cifar10_training_flops_per_example_count_its_convolutions_and_local_layers():
    forward = 2 * (24 * 24 * 64 * 5 * 5 * 3 + 12 * 12 * 64 * 5 * 5 * 64
                   + 2304 * 384 + 384 * 192 + 192 * 10)
    # conv1's input gradient (towards the images) is not needed for training.
    backward = 2 * forward - 2 * 24 * 24 * 64 * 5 * 5 * 3
    train, inference = suite.train_flops_per_example(registry.get('cifar10'), 4)
    assert inference == forward
    assert train == forward + backward


def test_counting_flops_of_a_dynamic_batch_names_the_op():
    images = tf.placeholder(tf.float32, [None, 8, 8, 3])
    conv = tf.nn.conv2d(images, tf.zeros([3, 3, 3, 4]), [1, 1, 1, 1], 'SAME', name='dynamic')
    with pytest.raises(towers.TowersError, match='dynamic'):
        benchmark.count_flops(conv)


def test_throughput_runs_the_warmup_untimed_and_quotes_the_median_of_the_blocks():
    runs = []
    step = tf.py_func(lambda: runs.append(1) or np.float32(0), [], tf.float32)
    plan = benchmark.Plan(warmup_steps=2, steps_per_repeat=3, repeats=4)
    throughput = benchmark.measure_throughput(step, 10, tf.ConfigProto(), plan)
    assert len(runs) == 2 + 3 * 4
    assert len(throughput.repeat_rates) == 4
    assert throughput.examples_per_sec == np.median(throughput.repeat_rates)


def rows_of(rates):
    return [report.Row(key, key, devices, 128 * devices, 1 if key != 'input_only' else 0,
                       benchmark.Throughput(rate, [rate]))
            for (key, devices), rate in rates.items()]


def test_targets_compare_towers_at_the_most_devices():
    rows = rows_of({('single_device', 1): 100.0, ('single_device', 2): 200.0,
                    ('towers', 1): 100.0, ('towers', 2): 180.0,
                    ('mirrored', 1): 90.0, ('mirrored', 2): 200.0,
                    ('input_only', 2): 1000.0, ('in_memory_step', 2): 180.0,
                    ('end_to_end', 2): 171.0})
    targets = report.targets(rows, matmul_rate=1e12, train_flops_per_example=1e9)
    assert [round(t.value, 3) for t in targets] == [0.9, 0.9, 0.95, 0.18]
    assert [t.threshold for t in targets] == [0.95, 1.0, 0.9, 0.75]


def test_table_gives_each_row_its_ratio_to_the_single_device_with_the_same_global_batch():
    rows = rows_of({('single_device', 1): 100.0, ('single_device', 2): 200.0,
                    ('towers', 2): 150.0})
    table = report.format_table(rows, matmul_rate=1e12, train_flops_per_example=1e9)
    towers_line = next(line for line in table.splitlines() if line.startswith('towers'))
    assert towers_line.split()[-2:] == ['0.75', '0.15']


@pytest.mark.parametrize('step_fn', [suite.towers_step, suite.mirrored_step])
def test_segdec_entry_trains_its_segmentation_one_step_on_two_devices(step_fn):
    entry = registry.get('segdec')
    setup = towers.configure_devices(2)
    train_op = step_fn(entry, entry.synthetic_batch(2), setup, batch_size=1)
    segment_weights, = tf.trainable_variables('segment/conv1/weights')
    decision_weights, = tf.trainable_variables('decision/conv1/weights')
    with tf.train.SingularMonitoredSession(config=setup.config) as session:
        before = session.run([segment_weights, decision_weights])
        session.run(train_op)
        after = session.run([segment_weights, decision_weights])
        assert session.run(tf.train.get_global_step()) == 1
    assert not np.array_equal(before[0], after[0])
    np.testing.assert_array_equal(before[1], after[1])


def test_an_unknown_model_is_refused_with_the_registered_names():
    with pytest.raises(towers.TowersError, match="unknown model 'resnet'; registered models: "
                                                 "cifar10, segdec"):
        registry.get('resnet')


def tiny_kolektor(data_dir):
    folder = os.path.join(data_dir, 'kolektor')
    kolektor_synthetic.write_dataset(folder, num_items=10, parts_per_item=4)
    return folder


def tiny_cifar(data_dir):
    write_tiny_cifar(data_dir)
    return data_dir


# A data set small enough to write in a test, for each registered model's real input.
TINY_DATA_SETS = {'cifar10': tiny_cifar, 'segdec': tiny_kolektor}


@pytest.mark.parametrize('name', registry.names())
def test_real_input_of_every_model_has_the_shapes_and_types_of_its_synthetic_batch(name,
                                                                                   tmp_path):
    entry = registry.get(name)
    real = entry.real_input(TINY_DATA_SETS[name](str(tmp_path)), 4)
    synthetic = entry.synthetic_batch(4)
    assert ([(t.shape.as_list(), t.dtype.base_dtype) for t in real]
            == [(t.shape.as_list(), t.dtype.base_dtype) for t in synthetic])
