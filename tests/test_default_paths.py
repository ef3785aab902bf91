"""Specification of the documented commands run as a newcomer runs them, on their default paths
(no --data_dir, --train_dir or --out_dir): train, evaluate, train again (resuming), evaluate
again, each a process of its own, every default lookup finding the one data set the first run
generated. Each workload runs in a fresh copy of the repository whose /tmp is its own
(`script_runs.FreshCopy`), never the checkout's `data/` or the machine's /tmp. Sizes and step
counts are small; the paths are the defaults."""
import concurrent.futures
import os
import re

import pytest

from script_runs import REPO, FreshCopy
from towers.compat import tf

GENERATED = re.compile(r'using the GENERATED (.+?)-format data set in (\S+);')
RESUMED = re.compile(r'resuming from step (\d+) in ')


def readme_first_command():
    """The README's first command, its training part: 'python scripts/...'."""
    with open('%s/README.md' % REPO) as f:
        first = f.read().split('```\n', 2)[1].splitlines()[0]
    return first.split(' && ', 1)[1]


def with_max_steps(command, steps):
    """`command` with its --max_steps value set to `steps`."""
    changed, count = re.subn(r'--max_steps \d+', '--max_steps %d' % steps, command)
    assert count == 1, command
    return changed


SEGDEC = 'python scripts/train_segdec.py --num_gpus 1 --image_height 128 --image_width 64'
EVAL_SEGDEC = 'python scripts/eval_segdec.py --image_height 128 --image_width 64'
SIDE_BY_SIDE = ('python scripts/train_side_by_side.py --models unet --num_gpus 1 '
                '--image_size 32 --batch_size 1')
EVAL_SIDE_BY_SIDE = ('python scripts/eval_side_by_side.py --image_size 32 --num_panels 1 '
                     '--precise_bn_batches 0')
IMAGE_FOLDER = 'python scripts/train_image_folder.py --num_gpus 1 --image_size 32 --batch_size 4'
IMAGENET = 'python scripts/train_imagenet.py --num_gpus 1 --image_size 32 --batch_size 2'
EVAL_IMAGENET = ('python scripts/eval_imagenet.py --image_size 32 --noten_crop '
                 '--precise_bn_batches 0')
FASHION_MNIST = 'python scripts/train_fashion_mnist.py --num_gpus 1'
README = with_max_steps(readme_first_command(), 3)

# Each workload: its data set's generated folder and its training folder, as the commands see
# them, and its commands in order, each with what it must show: a training the steps its
# stages resume from (none for a new training), an evaluation the global step of the
# checkpoint it evaluates (in the TensorBoard events it writes to <train_dir>/eval).
WORKLOADS = {
    'cifar10': ('/tmp/cifar10_data/cifar-10-batches-generated', '/tmp/cifar10_train', [
        (README, []),
        ('python scripts/cifar10_eval.py --run_once', 3),
        (README, [3]),                        # the README's command again: nothing to train
        ('python scripts/cifar10_eval.py --run_once', 3)]),
    'segdec': ('/tmp/repo/data/kolektor/kolektor-generated', '/tmp/segdec_train', [
        (SEGDEC + ' --max_steps 2 --decision_steps 1', [2]),   # segment to 2, decision to 3
        (EVAL_SEGDEC, 3),
        (SEGDEC + ' --max_steps 4 --decision_steps 1', [3, 4]),
        (EVAL_SEGDEC, 5)]),
    'fashion_mnist': ('/tmp/fashion_mnist_data/fashion-mnist-generated',
                      '/tmp/fashion_mnist_train', [
                          (FASHION_MNIST + ' --max_steps 3', []),
                          ('python scripts/eval_fashion_mnist.py', 3),
                          (FASHION_MNIST + ' --max_steps 5', [3]),
                          ('python scripts/eval_fashion_mnist.py', 5)]),
    'image_folder': ('/tmp/image_folder_data/oct2017-generated', '/tmp/image_folder_train', [
        (IMAGE_FOLDER + ' --max_steps 2', []),
        ('python scripts/eval_image_folder.py', 2),
        (IMAGE_FOLDER + ' --max_steps 3', [2]),
        ('python scripts/eval_image_folder.py', 3)]),
    'imagenet': ('/tmp/imagenet_data/imagenet-generated', '/tmp/imagenet_train', [
        (IMAGENET + ' --max_steps 2', []),
        (EVAL_IMAGENET, 2),
        (IMAGENET + ' --max_steps 3', [2]),
        (EVAL_IMAGENET, 3)]),
    'side_by_side': ('/tmp/segmentation_data/segmentation-generated', '/tmp/side_by_side_train', [
        (SIDE_BY_SIDE + ' --max_steps 2', []),
        (EVAL_SIDE_BY_SIDE, 2),
        (SIDE_BY_SIDE + ' --max_steps 3', [2]),
        (EVAL_SIDE_BY_SIDE, 3)]),
}


def evaluated_steps(eval_dir):
    """The global steps of the summaries in the TensorBoard events of `eval_dir`."""
    return {event.step for name in os.listdir(eval_dir) if 'tfevents' in name
            for event in tf.train.summary_iterator(os.path.join(eval_dir, name))
            if event.summary.value}


@pytest.fixture(scope='module')
def runs(tmp_path_factory):
    """Every workload's commands run in order in a fresh copy of its own, two workloads at a
    time (one's start-up beside the other's steps), up to the first that fails:
    {workload: [(result, the steps evaluated so far) of each command]}."""
    def run(workload):
        copy = FreshCopy(tmp_path_factory.mktemp(workload))
        eval_dir = os.path.join(copy.root, os.path.relpath(WORKLOADS[workload][1], '/tmp'),
                                'eval')
        results = []
        for command, _ in WORKLOADS[workload][2]:
            result = copy.run(command)
            results.append((result, evaluated_steps(eval_dir) if os.path.isdir(eval_dir)
                            else set()))
            if result.returncode:
                break
        return results
    # Made before the threads: the first `getbasetemp()` of an xdist worker empties the
    # worker's folder, so two threads making it at once could remove each other's.
    tmp_path_factory.getbasetemp()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        return dict(zip(WORKLOADS, pool.map(run, WORKLOADS)))


def test_the_readme_s_first_command_trains_the_tutorial_on_four_towers():
    assert readme_first_command() == ('python scripts/train_cifar10_multi_gpu.py --num_gpus 4 '
                                      '--max_steps 1000')


@pytest.mark.parametrize('workload', sorted(WORKLOADS))
def test_documented_commands_run_again_and_in_sequence_on_their_default_paths(workload, runs):
    data_set, _, commands = WORKLOADS[workload]
    evaluated = set()
    for number, ((command, shows), (result, steps)) in enumerate(zip(commands, runs[workload])):
        output = result.stdout + result.stderr
        assert result.returncode == 0, '%s failed:\n%s' % (command, output)
        # The one data set, generated by the first command alone, found by every other.
        assert [found for _, found in GENERATED.findall(output)] == [data_set], output
        assert ('generated a set' in output) == (number == 0), output
        if 'scripts/train_' in command:
            assert [int(step) for step in RESUMED.findall(output)] == shows, output
            if command in [earlier for earlier, _ in commands[:number]]:   # the same again
                assert 'nothing to train: step %d is the last' % shows[0] in output, output
        else:
            evaluated.add(shows)
            assert steps == evaluated, output
    assert len(runs[workload]) == len(commands)
