"""Replays the original CIFAR-10 tutorial's regression figures with this project's code.

    python scripts/regress_cifar10.py --golden tests/data/regression/cifar10/golden_train_seed0.json
    python scripts/regress_cifar10.py \\
        --eval_golden tests/data/regression/cifar10/golden_eval_seed0.json \\
        --checkpoint tests/data/regression/cifar10/original_n2_s0_300.ckpt

`--golden`: every run of the file (its tower count, seed and steps) is trained again with
`models.cifar10.build_train_graph` on towers of virtual CPU devices, on the recipe's batches
(`models.cifar10_regression`) from the recipe's initial weights. Per run it prints the largest
deviation of the tower losses from the original's (tolerance 1e-3 absolute), of the step-0
averaged gradient norms (1e-4 relative), and of the final sums of |value| of the variables
(reported only: the tutorial updates the moving averages unordered with the weights, so which
value a shadow reads depends on scheduling).

`--eval_golden` with `--checkpoint`: the checkpoint's moving averages are restored into the
project's evaluation graph, which must reproduce the original's precision @ 1, true count
(exactly) and per-batch sums of |logits| (1e-4 relative).

Both run TensorFlow with one intra-op and one inter-op thread, as the goldens were measured.
The exit status is non-zero when any figure is out of its tolerance.
"""
import argparse
import os

import numpy as np

import towers
from models import cifar10
from models import cifar10_regression as recipe
from towers import cli
from towers.compat import tf

LOSS_TOLERANCE = 1e-3
GRAD_NORM_TOLERANCE = 1e-4
EVAL_TOLERANCE = 1e-4


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--golden', help='JSON of training runs of the original tutorial '
                                         '(golden_train_seed0.json).')
    parser.add_argument('--eval_golden', help='JSON of the original evaluation of a checkpoint '
                                              '(golden_eval_seed0.json).')
    parser.add_argument('--checkpoint', help='Prefix of the checkpoint the original wrote, '
                                             'for --eval_golden.')
    args = parser.parse_args(argv)
    if not (args.golden or args.eval_golden):
        parser.error('give --golden, --eval_golden or both')
    if args.eval_golden and not args.checkpoint:
        parser.error('--eval_golden needs --checkpoint')
    return args


def _session_config(num_towers):
    return towers.configure_devices(num_towers, intra_op_threads=1, inter_op_threads=1)


def _max_relative_deviation(measured, expected, names):
    """Largest |measured - expected| / |expected| over `names`, and the name where it is."""
    deviations = {name: abs(measured[name] - expected[name]) / abs(expected[name])
                  for name in names}
    worst = max(deviations, key=deviations.get)
    return deviations[worst], worst


def _initial_values_loader(train_graph, values):
    """An op and feed that set each trainable variable and its moving average to `values`."""
    assigns, feed = [], {}
    for var in tf.trainable_variables():
        value = tf.placeholder(var.dtype.base_dtype, var.shape)
        feed[value] = values[var.op.name]
        assigns += [var.assign(value), train_graph.variable_averages.average(var).assign(value)]
    return tf.group(*assigns), feed


def replay_training(num_towers, seed, steps):
    """Trains the project's graph as the original run did.

    Returns:
      tower_losses: [steps, num_towers] each tower's total loss, fetched with the step.
      grad_norms: dict variable name -> L2 norm of its averaged gradient at step 0.
      abs_sums: dict variable name -> sum of |value| after the last step, for every global
        variable.
    """
    setup = _session_config(num_towers)
    global_batch = recipe.TOWER_BATCH * num_towers
    with tf.Graph().as_default():
        images = tf.placeholder(tf.float32, (global_batch,) + recipe.IMAGE_SHAPE)
        labels = tf.placeholder(tf.int32, [global_batch])
        graph = cifar10.build_train_graph(images, labels, setup.tower_devices, setup.ps_device,
                                          batch_size=recipe.TOWER_BATCH)
        load_op, load_feed = _initial_values_loader(graph, recipe.initial_weights(seed))
        grads = {var.op.name: grad for grad, var in graph.replicated.grads['total']}
        tower_losses, grad_norms = [], {}
        with tf.Session(config=setup.config) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(load_op, load_feed)
            for step in range(steps):
                batch_images, batch_labels = recipe.batch(step, global_batch, seed)
                fetches = {'train': graph.train_op, 'losses': graph.replicated.tower_losses}
                if step == 0:
                    fetches['grads'] = grads
                values = sess.run(fetches, {images: batch_images, labels: batch_labels})
                tower_losses.append(values['losses'])
                if step == 0:
                    grad_norms = {name: float(np.linalg.norm(g))
                                  for name, g in values['grads'].items()}
            abs_sums = {var.op.name: float(np.abs(value).sum()) for var, value in
                        zip(tf.global_variables(), sess.run(tf.global_variables()))}
    return np.array(tower_losses), grad_norms, abs_sums


def check_training(golden_path):
    """Replays every run of `golden_path`; returns the list of failures."""
    golden = cli.read_json(golden_path, '--golden')
    runs = golden.get('runs')
    if not runs:
        raise towers.TowersError('--golden %s has no "runs"' % golden_path)
    failures = []
    for run in (runs.values() if isinstance(runs, dict) else runs):
        num_towers, seed, steps = run['num_towers'], run['seed'], run['steps']
        print('%s: %d tower(s), seed %d, %d steps' % (os.path.basename(golden_path), num_towers,
                                                       seed, steps), flush=True)
        decay_steps = cifar10.learning_rate_decay_steps(recipe.TOWER_BATCH, num_towers)
        if decay_steps != run['learning_rate_decay_steps']:
            failures.append('%d towers: learning-rate decay steps %d, the original %d'
                            % (num_towers, decay_steps, run['learning_rate_decay_steps']))
        losses, grad_norms, abs_sums = replay_training(num_towers, seed, steps)
        expected_losses = np.array(run['tower_losses_per_step'])
        loss_deviation = np.abs(losses - expected_losses)
        step, tower = np.unravel_index(np.argmax(loss_deviation), loss_deviation.shape)
        print('  tower losses: max |deviation| %.3g (step %d, tower %d; tolerance %g)'
              % (loss_deviation[step, tower], step, tower, LOSS_TOLERANCE))
        if loss_deviation.max() > LOSS_TOLERANCE:
            failures.append('%d towers: tower %d loss at step %d is %.6f, the original %.6f'
                            % (num_towers, tower, step, losses[step, tower],
                               expected_losses[step, tower]))
        expected_norms = run['step0_averaged_grad_l2_norms']
        if sorted(grad_norms) != sorted(expected_norms):
            failures.append('%d towers: gradients of %s, the original has %s'
                            % (num_towers, sorted(grad_norms), sorted(expected_norms)))
        else:
            deviation, name = _max_relative_deviation(grad_norms, expected_norms, expected_norms)
            print('  step-0 averaged gradient norms: max relative deviation %.3g (%s; '
                  'tolerance %g)' % (deviation, name, GRAD_NORM_TOLERANCE))
            if deviation > GRAD_NORM_TOLERANCE:
                failures.append('%d towers: step-0 gradient norm of %s is %.8g, the original '
                                '%.8g' % (num_towers, name, grad_norms[name],
                                          expected_norms[name]))
        _report_abs_sums(abs_sums, run['final_abs_sums'])
    return failures


def _report_abs_sums(abs_sums, expected):
    if sorted(abs_sums) != sorted(expected):
        print('  final sums of |value|: variables %s, the original has %s'
              % (sorted(abs_sums), sorted(expected)))
        return
    averages = [name for name in expected if name.endswith('/ExponentialMovingAverage')]
    others = [name for name in expected if name not in averages]
    print('  final sums of |value| (reported only): weights and global_step max relative '
          'deviation %.3g (%s), moving averages %.3g (%s)'
          % (_max_relative_deviation(abs_sums, expected, others)
             + _max_relative_deviation(abs_sums, expected, averages)))


def replay_evaluation(checkpoint, steps, batch_size, seed):
    """Evaluates the checkpoint's moving averages on the recipe's batches of `steps`.

    Returns:
      true_count: examples whose top logit is the label.
      abs_logit_sums: per batch, the sum of |logits|.
    """
    if not tf.train.checkpoint_exists(checkpoint):
        raise towers.TowersError('--checkpoint %s: no checkpoint with that prefix (expected '
                                 '%s.index and its data files)' % (checkpoint, checkpoint))
    setup = _session_config(1)
    with tf.Graph().as_default():
        images = tf.placeholder(tf.float32, (batch_size,) + recipe.IMAGE_SHAPE)
        labels = tf.placeholder(tf.int32, [batch_size])
        logits, in_top_1 = cifar10.evaluation(images, labels)
        saver = tf.train.Saver(cifar10.variables_to_restore())
        true_count, abs_logit_sums = 0, []
        with tf.Session(config=setup.config) as sess:
            saver.restore(sess, checkpoint)
            for step in steps:
                batch_images, batch_labels = recipe.batch(step, batch_size, seed)
                batch_logits, correct = sess.run(
                    [logits, in_top_1], {images: batch_images, labels: batch_labels})
                true_count += int(correct.sum())
                abs_logit_sums.append(float(np.abs(batch_logits).sum()))
    return true_count, abs_logit_sums


def check_evaluation(golden_path, checkpoint):
    """Evaluates `checkpoint` as `golden_path` describes; returns the list of failures."""
    golden = cli.read_json(golden_path, '--eval_golden')
    steps, batch_size = golden['eval_steps'], golden['batch']
    true_count, abs_logit_sums = replay_evaluation(checkpoint, steps, batch_size,
                                                   golden['seed'])
    precision = true_count / float(len(steps) * batch_size)
    expected_sums = golden['abs_logit_sums']
    deviations = [abs(a - e) / abs(e) for a, e in zip(abs_logit_sums, expected_sums)]
    print('%s on %s: precision @ 1 = %.5f (original %.5f), true count %d (original %d), '
          'per-batch sums of |logits| max relative deviation %.3g (tolerance %g)'
          % (os.path.basename(golden_path), os.path.basename(checkpoint), precision,
             golden['precision_at_1'], true_count, golden['true_count'], max(deviations),
             EVAL_TOLERANCE))
    failures = []
    if true_count != golden['true_count'] or precision != golden['precision_at_1']:
        failures.append('evaluation: true count %d and precision %.5f, the original %d and '
                        '%.5f' % (true_count, precision, golden['true_count'],
                                  golden['precision_at_1']))
    if len(abs_logit_sums) != len(expected_sums) or max(deviations) > EVAL_TOLERANCE:
        failures.append('evaluation: sums of |logits| %s, the original %s'
                        % (abs_logit_sums, expected_sums))
    return failures


def main(argv):
    args = _parse_args(argv)
    failures = []
    if args.golden:
        failures += check_training(args.golden)
    if args.eval_golden:
        failures += check_evaluation(args.eval_golden, args.checkpoint)
    if failures:
        raise towers.TowersError('the project deviates from the original tutorial:\n  '
                                 + '\n  '.join(failures))
    print('all figures within tolerance')
    return 0


if __name__ == '__main__':
    cli.run(main)
