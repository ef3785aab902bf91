"""Specification of the throughput benchmark: its results file, FLOP counting, timing blocks,
targets, and the model registry it measures through."""
import functools
import json
import os
import re
import runpy

import numpy as np
import pytest

import small_net
import towers
from models import registry
from models.datasets.cifar10 import reader as cifar10_input
from models.datasets.fashion_mnist import synthetic as fashion_mnist_synthetic
from models.datasets.image_folder import synthetic as image_folder_synthetic
from models.datasets.imagenet import synthetic as imagenet_synthetic
from models.datasets.kolektor import synthetic as kolektor_synthetic
from towers import compat
from towers.benchmarks import measure as benchmark
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
                        configure=towers.configure_devices, matmul_size=16, modes=(),
                        deterministic=False)
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
    with pytest.raises(towers.TowersError, match="unknown model 'alexnet'; registered models: "
                                                 + ', '.join(registry.names())):
        registry.get('alexnet')


@pytest.mark.parametrize('name', registry.names())
def test_what_the_registry_says_of_a_model_without_tensorflow_is_what_its_entry_says(name):
    entry = registry.get(name)
    assert registry.about(name) == tuple(getattr(entry, field) for field in registry.About._fields)


def tiny_kolektor(data_dir):
    folder = os.path.join(data_dir, 'kolektor')
    kolektor_synthetic.write_dataset(folder, num_items=10, parts_per_item=4)
    return folder


def tiny_cifar(data_dir):
    write_tiny_cifar(data_dir)
    return data_dir


def tiny_imagenet(data_dir):
    imagenet_synthetic.generate(os.path.join(data_dir, imagenet_synthetic.GENERATED_DIR),
                                train_per_class=1, validation_per_class=1)
    return data_dir


# A data set small enough to write in a test, for each registered model's real input.
def tiny_image_folder(data_dir):
    folder = os.path.join(data_dir, 'image_folder')
    image_folder_synthetic.write_dataset(folder, train_per_class=1, test_per_class=1, size=32)
    return folder


def tiny_fashion_mnist(data_dir):
    generated = os.path.join(data_dir, fashion_mnist_synthetic.GENERATED_DIR)
    fashion_mnist_synthetic.generate(generated, num_train=8, num_test=4)
    return data_dir


TINY_DATA_SETS = {'cifar10': tiny_cifar, 'fashion_mnist': tiny_fashion_mnist,
                  'image_folder': tiny_image_folder,
                  'imagenet': tiny_imagenet, 'segdec': tiny_kolektor}


@pytest.mark.parametrize('name', registry.names())
def test_real_input_of_every_model_has_the_shapes_and_types_of_its_synthetic_batch(name,
                                                                                   tmp_path):
    entry = registry.get(name)
    real = entry.real_input(TINY_DATA_SETS[name](str(tmp_path)), 4)
    synthetic = entry.synthetic_batch(4)
    assert ([(t.shape.as_list(), t.dtype.base_dtype) for t in real]
            == [(t.shape.as_list(), t.dtype.base_dtype) for t in synthetic])


class Recorded:
    """A step that records its name in `log` each time it runs."""

    def __init__(self, name, log):
        self.op = tf.py_func(lambda: log.append(name) or np.float32(0), [], tf.float32)


def test_configurations_are_timed_in_turns_after_their_warmup_the_first_of_a_round_rotating():
    runs = []
    steps = {}
    for name in ('a', 'b'):
        with tf.Graph().as_default():
            steps[name] = benchmark.TimedSession(Recorded(name, runs).op, 10, tf.ConfigProto())
    throughputs = benchmark.measure_in_turns([steps['a'], steps['b']],
                                             benchmark.Plan(warmup_steps=1, steps_per_repeat=2,
                                                            repeats=3))
    for session in steps.values():
        session.close()
    assert ''.join(runs) == 'ab' + 'aabb' + 'bbaa' + 'aabb'
    assert [len(t.repeat_rates) for t in throughputs] == [3, 3]


def rates(*values):
    return benchmark.Throughput(float(np.median(values)), list(values))


def test_a_paired_ratio_is_the_median_of_the_rounds_ratios_with_their_quartiles():
    ratio = benchmark.paired_ratio(rates(10.0, 40.0, 30.0, 20.0, 50.0), rates(*[10.0] * 5))
    assert ratio == benchmark.Ratio(3.0, 2.0, 4.0)


def test_a_load_falling_on_both_configurations_of_a_round_leaves_their_ratio_alone():
    # A slow round halves both rates: their medians' ratio moves, the paired ratio does not.
    ratio = benchmark.paired_ratio(rates(90.0, 45.0, 45.0), rates(100.0, 50.0, 50.0))
    assert ratio == pytest.approx(benchmark.Ratio(0.9, 0.9, 0.9))
    assert benchmark.unpaired_ratio(rates(90.0, 45.0, 45.0), rates(100.0, 100.0, 50.0)).median \
        == pytest.approx(0.45)


def rows_timed_in_turns(rates_by_key, devices=2):
    return [report.Row(key, '(%s)' % key, devices, 128 * devices, 1, rates(*values), group=1)
            for key, values in rates_by_key.items()]


def test_a_ratio_whose_interquartile_range_exceeds_max_spread_is_marked_too_wide():
    rows = rows_timed_in_turns({'single_device': [100.0] * 5,
                                'towers': [80.0, 90.0, 100.0, 110.0, 120.0]})
    table = report.format_table(rows, matmul_rate=1e12, train_flops_per_example=1e9)
    towers_line = next(line for line in table.splitlines() if line.startswith('(towers)'))
    assert towers_line.split()[-3:] == ['[0.90-1.10]*', '1.00', '0.10']


def test_a_target_whose_threshold_lies_inside_the_interquartile_range_is_undecided():
    target = report.Target('towers / MirroredStrategy', 1.01, 1.0, low=0.98, high=1.04)
    assert report.format_targets([target]).endswith('undecided: the threshold is inside the IQR')
    met = target._replace(low=1.005)
    assert report.format_targets([met]).endswith(' met')


def test_the_fastest_mode_is_named_when_its_lower_quartile_beats_the_towers():
    rows = rows_timed_in_turns({'towers': [100.0] * 5,
                                'replicated': [103.0, 104.0, 105.0, 106.0, 107.0],
                                'towers_xla': [95.0] * 5})
    assert report.format_modes(rows).splitlines()[-1] == (
        'fastest at 2 devices: (replicated), 1.05x (b) towers [1.04-1.06]')


def test_no_mode_is_named_fastest_when_the_spread_covers_the_towers():
    rows = rows_timed_in_turns({'towers': [100.0] * 5,
                                'replicated': [97.0, 99.0, 102.0, 104.0, 106.0]})
    assert report.format_modes(rows).splitlines()[-1].startswith(
        'fastest at 2 devices: no mode is faster than (b) towers')


def test_a_mode_ahead_by_less_than_the_minimum_gain_is_not_named_fastest():
    rows = rows_timed_in_turns({'towers': [100.0] * 5,
                                'replicated': [100.5, 101.0, 101.0, 102.0, 104.0]})
    assert report.format_modes(rows).splitlines()[-1] == (
        'fastest at 2 devices: no mode is faster than (b) towers (parameter server, float32, '
        'no XLA) by 2% beyond the spread of the rounds')


def small_net_entry(tower_fn=functools.partial(small_net.tower_fn, weight_decay=0),
                    variables_shared_by_object=False):
    """A registry entry of the small net of the mode tests (without the regulariser, which
    MirroredStrategy's row refuses), its batch held in memory."""
    class Recipe(small_net.SmallRecipe):
        def tower_fn(self, batch):
            return tower_fn(batch)

    Recipe.variables_shared_by_object = variables_shared_by_object

    def constant_batch(global_batch, data_dir=None):
        return tuple(tf.constant(array) for array in small_net.batch(global_batch))

    return registry.get('cifar10')._replace(
        name='small_net', title='small net', batch_size=2, recipe=lambda batch_size: Recipe(),
        synthetic_batch=constant_batch,
        real_input=lambda data_dir, global_batch: constant_batch(global_batch),
        flop_skip_scopes=())


def run_modes(entry, modes, deterministic=False):
    return suite.run(entry, batch_size=2, num_gpus=2, data_dir=None,
                     plan=benchmark.Plan(0, 1, 2), configure=towers.configure_devices,
                     matmul_size=16, modes=modes, deterministic=deterministic)


def modes_named(*keys):
    return [mode for mode in suite.MODES if mode[0] in keys]


def test_modes_are_timed_in_turns_with_the_towers_of_the_most_devices():
    results = run_modes(small_net_entry(), modes_named('replicated', 'towers_mixed'))
    groups = {row.key: row.group for row in results.rows if row.devices == 2}
    assert groups['replicated'] == groups['towers_mixed'] == groups['towers'] is not None
    ratios = dict(report.headline_ratios(results.rows, results.matmul_rate,
                                         results.train_flops_per_example))
    assert ratios['replicated / towers 2'].low is not None
    assert 'towers_mixed / towers 2' in ratios


def test_the_towers_with_op_determinism_are_timed_in_turns_with_the_towers_and_only_they():
    results = run_modes(small_net_entry(), (), deterministic=True)
    rows = {row.key: row for row in results.rows if row.devices == 2}
    assert rows[suite.DETERMINISTIC].label == '(f) towers, op determinism'
    assert rows[suite.DETERMINISTIC].group == rows['towers'].group is not None
    ratios = dict(report.headline_ratios(results.rows, results.matmul_rate,
                                         results.train_flops_per_example))
    assert ratios['towers_deterministic / towers 2'].low is not None
    assert not compat.op_determinism_enabled()


def test_a_mode_the_model_cannot_train_in_is_reported_as_not_measured():
    shared = []

    def shares_its_variable_by_object(batch):
        images, labels = batch
        if not shared or shared[-1].graph is not tf.get_default_graph():
            with tf.name_scope(None):
                shared.append(tf.Variable(tf.zeros([small_net.CHANNELS, small_net.CLASSES])))
        logits = tf.matmul(tf.reduce_mean(images, [1, 2]), shared[-1])
        tf.losses.sparse_softmax_cross_entropy(labels, logits)

    results = run_modes(small_net_entry(shares_its_variable_by_object,
                                        variables_shared_by_object=True),
                        modes_named('replicated'))
    assert [label for label, _ in results.skipped] == ['(f) replicated']
    assert 'shares one Keras model\'s variables between the towers by object; ' \
           '--variable_update replicated copies' in results.skipped[0][1]
    assert 'replicated' not in {row.key for row in results.rows}


def test_a_fastest_mode_whose_spread_is_too_wide_is_not_concluded():
    rows = rows_timed_in_turns({'towers': [100.0] * 5,
                                'replicated': [102.0, 104.0, 110.0, 120.0, 130.0]})
    assert report.format_modes(rows).splitlines()[-1] == (
        'fastest at 2 devices: perhaps (replicated), 1.10x (b) towers [1.04-1.20]*, but its '
        'spread is too wide to conclude')


def test_the_estimator_rows_put_mirrored_estimators_beside_the_towers_and_keras_fit(capsys):
    benchmark_script = runpy.run_path(os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), 'scripts', 'benchmark.py'))
    assert benchmark_script['main'](['--estimator', '--model', 'fashion_mnist', '--num_gpus',
                                     '2', '--batch_size', '2', '--steps', '2', '--repeats', '1',
                                     '--warmup_steps', '1']) == 0
    lines = capsys.readouterr().out.splitlines()
    ratios = [line for line in lines if ' step rate / ' in line]
    assert [line.split(':')[0] for line in ratios] == [
        'Estimator step rate / towers.fit step rate on 1 device(s)',
        'Estimator step rate / towers.fit step rate on 2 device(s)',
        'Estimator step rate / Keras fit step rate on 2 device(s)']
    assert all(float(line.split(': ')[1].split()[0]) > 0 for line in ratios)


def test_the_horovod_rows_time_ranks_towers_one_device_and_where_a_ranks_step_goes(capsys):
    benchmark_script = runpy.run_path(os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), 'scripts', 'benchmark.py'))
    assert benchmark_script['main'](['--horovod', '--num_gpus', '2', '--batch_size', '2',
                                     '--steps', '1', '--repeats', '1',
                                     '--warmup_steps', '1']) == 0
    lines = capsys.readouterr().out.splitlines()
    rates = {line.split('  ')[1].strip(): float(line.split()[-5]) for line in lines
             if 'examples/sec (median of' in line}
    assert sorted(rates) == sorted(['horovod', 'towers', 'one device', "one rank's share"])
    assert all(rate > 0 for rate in rates.values())
    assert [line.split(':')[0].strip() for line in lines if ' / ' in line.split(':')[0]] == [
        'horovod / towers', 'horovod / one device', 'towers / one device',
        "horovod / one rank's share"]
    # CIFAR-10's 1,068,298 float32 weights are 4.3 MB of gradients a step.
    breakdown = re.search(r"a step ([\d.]+); its computation without collectives, the other "
                          r"ranks beside it, ([\d.]+); an allreduce of its gradients' 4\.3 MB "
                          r"alone ([\d.]+)$", lines[-1])
    assert breakdown and all(float(ms) > 0 for ms in breakdown.groups()), lines[-1]


def test_the_tf1_row_times_a_program_on_tf1_15_under_the_runner_and_a_port_in_turns(
        capsys, tmp_path, tf1_python):
    benchmark_script = runpy.run_path(os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), 'scripts', 'benchmark.py'))
    program = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data', 'legacy',
                           'compare_program.py')
    flags = '--max_steps 6 --train_dir %s' % (tmp_path / 'train')
    assert benchmark_script['main'](['--tf1_program', program, '--tf1_flags', flags,
                                     '--tf1_port', program, '--tf1_port_flags', flags,
                                     '--tf1_python', tf1_python, '--repeats', '2',
                                     '--warmup_steps', '2']) == 0
    lines = capsys.readouterr().out.splitlines()
    rounds = {line.split()[0]: line.split('rounds: ')[1] for line in lines if 'rounds: ' in line}
    assert sorted(rounds) == ['TF', 'port', 'runner']
    assert all(len(each.split(', ')) == 2 for each in rounds.values())
    ratios = [line for line in lines if "step rate / TF 1.15's" in line]
    assert [line.split(' step rate')[0] for line in ratios] == ["the runner's", "the port's"]
    assert all(float(line.split(': ')[1].split()[0]) > 0 for line in ratios)
    # Every run wrote its fixed folder in its own namespace, never here.
    assert not (tmp_path / 'train').exists()


def test_the_tf1_row_says_when_a_program_makes_too_few_steps(capsys, tmp_path, tf1_python):
    benchmark_script = runpy.run_path(os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), 'scripts', 'benchmark.py'))
    program = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data', 'legacy',
                           'compare_program.py')
    with pytest.raises(towers.TowersError, match=r'compare_program.py .* made no more than 5 '
                       r'steps \(TF 1.15\): give it more steps'):
        benchmark_script['main'](['--tf1_program', program, '--tf1_flags',
                                  '--max_steps 3 --train_dir %s' % (tmp_path / 'train'),
                                  '--tf1_python', tf1_python, '--repeats', '1',
                                  '--warmup_steps', '5'])
