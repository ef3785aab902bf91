"""Specification of Horovod under the legacy runner (`towers.legacy.horovod`): a Horovod program
of N ranks computes what one process computes on the N ranks' whole batch; the collectives give
Horovod's arithmetic; a rank that dies or waits alone ends the job with one line; the launch
forms users typed start the ranks."""
import json
import os
import re
import signal
import subprocess
import sys

import numpy as np
import pytest

from towers.cluster import launcher
from towers import errors
from towers.errors import TowersError
from towers.flags import FlagError
from towers.legacy.horovod import launch, ranks, watchdog

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(REPO, 'tests', 'data', 'horovod', 'horovod_program.py')
VALUE = np.array([[1.0, -2.0, 3.0], [2.0, -3.5, 6.0]])   # the program's value on ranks 0, 1


def run_legacy(*args, cwd=REPO):
    return subprocess.run([sys.executable, '-m', 'towers.legacy'] + list(args), cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def records(out):
    return [json.loads((out / name).read_text()) for name in sorted(os.listdir(out))]


DETERMINISTIC = ('--deterministic', '--seed', '1')


@pytest.fixture(scope='module')
def trained(tmp_path_factory):
    """The program on 2 ranks (global batch 8), and as one process (batch 8), same seed."""
    root = tmp_path_factory.mktemp('horovod')
    two = run_legacy(*DETERMINISTIC, '--np', '2', PROGRAM, '--out', str(root / 'two'))
    assert two.returncode == 0, two.stdout[-3000:] + two.stderr[-3000:]
    one = run_legacy(*DETERMINISTIC, PROGRAM, '--out', str(root / 'one'))
    assert one.returncode == 0, one.stderr[-3000:]
    return two.stdout, records(root / 'two'), records(root / 'one')[0]


def test_two_ranks_train_as_one_process_on_their_whole_batch(trained):
    _, (rank0, rank1), alone = trained
    assert (rank0['size'], rank1['size'], alone['size']) == (2, 2, 1)
    np.testing.assert_allclose((np.array(rank0['losses']) + rank1['losses']) / 2,
                               alone['losses'], rtol=1e-5)
    # Dense and embedding (IndexedSlices) gradients, momentum slots, and the model trained
    # with backward_passes_per_step=2.
    compared = [name for name in alone['variables'] if not name.startswith('adasum')]
    assert len(compared) >= 18
    for name in compared:
        np.testing.assert_allclose(rank0['variables'][name], alone['variables'][name],
                                   atol=1e-5, err_msg=name)


def test_the_ranks_hold_the_same_variables_after_every_step(trained):
    _, (rank0, rank1), _ = trained
    for name, value in rank0['variables'].items():
        assert np.array_equal(value, rank1['variables'][name]), name


def test_the_broadcast_hook_starts_every_rank_from_rank_0s_weights(trained):
    _, (rank0, rank1), _ = trained
    # Each rank initialised 'start' to rank + 1.
    assert rank0['start_after_broadcast'] == rank1['start_after_broadcast'] == [[1.0] * 3] * 4


def test_allreduce_gives_horovods_reductions_scalings_and_compression(trained):
    _, ranks, _ = trained
    for record in ranks:
        np.testing.assert_allclose(record['sum'], VALUE.sum(0))
        np.testing.assert_allclose(record['average'], VALUE.mean(0))
        np.testing.assert_allclose(record['min'], VALUE.min(0))
        np.testing.assert_allclose(record['max'], VALUE.max(0))
        np.testing.assert_allclose(record['product'], VALUE.prod(0))
        np.testing.assert_allclose(record['scaled'], 3.0 * (0.5 * VALUE).sum(0))
        np.testing.assert_allclose(record['fp16'], VALUE.mean(0), rtol=1e-3)
        np.testing.assert_allclose(record['grouped'], [VALUE.sum(0), 2 * VALUE.sum(0)])


def test_adasum_combines_two_ranks_by_their_dot_product(trained):
    _, ranks, _ = trained
    a, b = VALUE
    dot = a @ b
    expected = (1 - dot / (2 * a @ a)) * a + (1 - dot / (2 * b @ b)) * b
    for record in ranks:
        np.testing.assert_allclose(record['adasum'], expected, rtol=1e-6)


def test_the_adasum_optimizer_keeps_the_ranks_equal_and_trains(trained):
    _, (rank0, rank1), alone = trained
    names = [name for name in rank0['variables'] if name.startswith('adasum/')]
    assert any(name.endswith('/DistributedDeltaGradientDescentOptimizer') for name in names)
    for name in names:
        assert rank0['variables'][name] == rank1['variables'][name], name
    assert rank0['variables']['adasum/proj/kernel'] != alone['variables']['adasum/proj/kernel']


def test_allgather_joins_a_different_number_of_rows_per_rank(trained):
    _, ranks, _ = trained
    for record in ranks:
        assert record['gathered'] == [[0, 0], [1, 1], [1, 1]]


def test_allgather_takes_rows_that_change_from_step_to_step(trained):
    _, ranks, _ = trained
    expected = [[0] * ((step % 3) + 1) + [1] * ((step + 1) % 3 + 1) for step in range(4)]
    for record in ranks:
        assert record['varying'] == expected


def test_broadcast_gives_every_rank_the_root_ranks_value(trained):
    _, ranks, _ = trained
    for record in ranks:
        np.testing.assert_allclose(record['from_rank_1'], VALUE[1])


def test_a_deterministic_job_repeats_byte_for_byte(trained, tmp_path):
    _, first, _ = trained
    again = run_legacy(*DETERMINISTIC, '--np', '2', PROGRAM, '--out', str(tmp_path / 'again'))
    assert again.returncode == 0, again.stdout[-3000:]
    for before, after in zip(first, records(tmp_path / 'again')):
        assert before['losses'] == after['losses']
        assert before['variables'] == after['variables']


def test_each_rank_is_its_own_process_with_its_own_seed_and_output_prefix(trained):
    output, _, _ = trained
    assert re.search(r'^\[launcher\] Horovod job of 2 ranks: ranks 0, 1 here; a step waits for '
                     r'its collectives at most 300 s', output, re.M)
    assert '[rank0] towers-legacy: compatibility pieces used: ' in output
    assert re.search(r'^\[rank1\] .*op determinism, graph seed 2, horovod.tensorflow$', output,
                     re.M)
    assert output.rstrip().endswith('[launcher] every process exited with status 0')


def test_a_job_over_several_hosts_runs_one_launch_per_host(tmp_path):
    # Two "hosts" of this machine, each launch starting its own rank on the machine's network,
    # rank r on port P + r.
    port = launcher.free_local_ports(1)[0]
    commands = [[sys.executable, '-m', 'towers.legacy', '--seed', '1', '--np', '2', '-H',
                 '127.0.0.1:1,localhost:1', '--host_index', str(index), '--port', str(port),
                 PROGRAM, '--out', str(tmp_path / 'out')] for index in (0, 1)]
    hosts = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, cwd=REPO) for command in commands]
    outputs = [host.communicate(timeout=300)[0] for host in hosts]
    assert [host.returncode for host in hosts] == [0, 0], outputs
    assert ('[launcher] Horovod job of 2 ranks on 127.0.0.1:1,localhost:1: ranks 1 here'
            in outputs[1])
    assert 'not isolated: the job spans several machines' in outputs[0]
    rank0, rank1 = records(tmp_path / 'out')
    assert rank0['variables'] == rank1['variables']
    assert rank0['gathered'] == [[0, 0], [1, 1], [1, 1]]


def test_more_ranks_than_gpus_on_a_host_is_refused_unless_asked():
    world = ranks.World(rank=2, size=4, local_rank=2, local_size=4)
    with pytest.raises(TowersError, match=r'^rank 2: 4 ranks on this host but 2 GPUs: two ranks '
                                          r'would share a GPU'):
        ranks.check_devices(world, 2, environ={})
    ranks.check_devices(world, 2, environ={ranks.SHARE_GPUS: '1'})
    ranks.check_devices(world, 0, environ={})


def test_a_killed_rank_ends_the_job_and_a_rerun_resumes_from_the_checkpoint(tmp_path):
    flags = [PROGRAM, '--out', str(tmp_path / 'out'), '--checkpoint_dir', str(tmp_path / 'ck'),
             '--steps', '6']
    killed = run_legacy('--seed', '1', '--np', '2', *flags, '--kill_rank', '1',
                        '--kill_step', '3')
    assert killed.returncode == 128 + signal.SIGKILL, killed.stdout[-3000:]
    launcher_lines = re.findall(r'^\[launcher\] .*', killed.stdout, re.M)
    assert launcher_lines[-2:] == [
        '[launcher] rank1 exited with status 137 (killed by SIGKILL); terminating the others',
        '[launcher] terminated rank0 (status 143)']
    rerun = run_legacy('--seed', '1', '--np', '2', *flags)
    assert rerun.returncode == 0, rerun.stdout[-3000:]
    start = int(re.search(r'^\[rank0\] rank 0 starts at step (\d+)$', rerun.stdout,
                          re.M).group(1))
    assert start >= 3
    assert '[rank1] rank 1 starts at step %d' % start in rerun.stdout
    assert [record['start_step'] for record in records(tmp_path / 'out')] == [start, start]


def test_a_collective_one_rank_waits_for_alone_fails_in_one_line_within_the_timeout(tmp_path):
    result = run_legacy('--collective_timeout', '3', '--np', '2', PROGRAM, '--out',
                        str(tmp_path / 'out'), '--extra_collective_rank', '1')
    assert result.returncode == 1
    # Rank 1 waits alone for 'extra'; rank 0 waits as long, alone too, for its next gather. Both
    # bounds run out within moments of each other: whichever rank's comes first ends the job.
    waited_for = {'0': "allgather of 'Fill_1:0'", '1': "allreduce of 'extra:0'"}
    failed = re.findall(r'^\[rank(\d)\] error: rank (\d): the (.+?) did not complete within 3 s: '
                        r'another rank stopped, or built another graph \(towers-legacy '
                        r'--collective_timeout sets the bound\)$', result.stdout, re.M)
    assert failed, result.stdout[-3000:]
    for rank, named_rank, collectives in failed:
        assert rank == named_rank and collectives.startswith(waited_for[rank]), failed
    ended_by = re.findall(r'^\[launcher\] rank(\d) exited with status 1; terminating the others$',
                          result.stdout, re.M)
    assert len(ended_by) == 1 and ended_by[0] in [rank for rank, _, _ in failed], result.stdout
    assert not re.search(r'^\[rank\d\] Traceback', result.stdout, re.M)


def test_check_lists_the_horovod_names_as_provided():
    result = run_legacy('--check', PROGRAM)
    assert result.returncode == 0, result.stdout
    for name in ('init', 'allreduce', 'allgather', 'broadcast', 'DistributedOptimizer',
                 'BroadcastGlobalVariablesHook', 'Adasum', 'Compression'):
        assert re.search(r'^horovod\.tensorflow\.%s\s+\d+\s+\S+\s+towers-legacy$' % name,
                         result.stdout, re.M), name


def test_a_name_horovod_had_and_the_runner_lacks_stops_with_one_line(tmp_path):
    script = tmp_path / 'script.py'
    script.write_text('import horovod.tensorflow as hvd\nhvd.init()\nhvd.join()\n')
    result = run_legacy(str(script))
    assert result.returncode == 1
    assert result.stderr.splitlines()[-2] == (
        "error: %s:3: horovod.tensorflow.join is not available: towers-legacy's Horovod "
        "does not have it" % script)


@pytest.mark.parametrize('argv, expected', [
    (['horovodrun', '-np', '2', '-H', 'localhost:2', 'python', 'train.py', '--lr', '1'],
     (2, [('localhost', 2)], 'train.py', ['--lr', '1'], {})),
    (['mpirun', '-np', '4', '-H', 'localhost:4', '-bind-to', 'none', '-map-by', 'slot', '-x',
      'NCCL_DEBUG=INFO', '-x', 'LD_LIBRARY_PATH', '-mca', 'pml', 'ob1', '-mca', 'btl',
      '^openib', '--allow-run-as-root', 'python3', '-u', 'train.py'],
     (4, [('localhost', 4)], 'train.py', [], {'NCCL_DEBUG': 'INFO'})),
    (['--seed', '3', '--np', '2', 'train.py', '--np', '5'],
     (2, [('localhost', 2)], 'train.py', ['--np', '5'], {})),
    (['--collective_timeout', '30', 'horovodrun', '-np', '2', 'python', 'train.py'],
     (2, [('localhost', 2)], 'train.py', [], {})),
])
def test_the_launch_forms_users_typed_give_the_ranks_and_the_program(tmp_path, monkeypatch,
                                                                     argv, expected):
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'train.py').write_text('')
    job = launch.parse(argv)
    assert (job.np, job.hosts, job.script, job.script_argv, job.env) == expected


def test_ranks_fill_the_hosts_in_order_and_each_host_counts_its_local_ranks(tmp_path,
                                                                            monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'train.py').write_text('')
    job = launch.parse(['horovodrun', '-np', '5', '-H', 'a:2,b:4', 'python', 'train.py'])
    placed = [(host, world.rank, world.local_rank, world.local_size, world.cross_rank,
               world.cross_size) for host, world in launch.worlds(job)]
    assert placed == [(0, 0, 0, 2, 0, 2), (0, 1, 1, 2, 0, 2), (1, 2, 0, 3, 1, 2),
                      (1, 3, 1, 3, 1, 2), (1, 4, 2, 3, 1, 2)]


@pytest.mark.parametrize('argv', [
    ['horovodrun', '-np', '2', 'python', '-u', '-m', 'trainer.task', '--steps', '3'],
    ['--np', '2', '-m', 'trainer.task', '--steps', '3'],
])
def test_a_program_run_as_a_module_is_launched_as_one(argv):
    job = launch.parse(argv)
    assert (job.script, job.module, job.script_argv) == (None, 'trainer.task', ['--steps', '3'])


def test_each_rank_draws_its_own_seed():
    assert launch._rank_options(['--seed', '7', '--legacy_devices', '2'], 1) == [
        '--seed', '8', '--legacy_devices', '2']
    assert launch._rank_options(['--deterministic'], 1) == ['--deterministic', '--seed', '1']


@pytest.mark.parametrize('argv, message', [
    (['mpirun', '-np', '2', '--frobnicate', 'python', 'train.py'],
     'mpirun option --frobnicate is not known to towers-legacy'),
    (['horovodrun', '-np', '2', 'python', '-m'], '-m needs a value'),
    (['horovodrun', '-np', '3', '-H', 'localhost:2', 'python', 'train.py'],
     '-np 3 ranks, but the hosts localhost:2 have 2 slots'),
    (['horovodrun', '-np', '2', '-H', 'a:x', 'python', 'train.py'],
     '-H a:x: expected host:slots'),
    (['--np', '0', 'train.py'], '--np 0: expected a number >= 1'),
    (['horovodrun', '-H', 'localhost:2', 'python', 'train.py'],
     'give the number of ranks: --np N'),
    (['--np', '2', 'missing.py'], 'cannot run missing.py: no such file'),
])
def test_a_bad_launch_is_one_error_line(tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'train.py').write_text('')
    with pytest.raises(FlagError) as raised:
        launch.parse(argv)
    assert str(raised.value).startswith(message), str(raised.value)


def test_a_bad_launch_from_the_command_line_prints_one_error_line(tmp_path):
    result = run_legacy('mpirun', '-np', '2', '--frobnicate', 'python', 'train.py',
                        cwd=str(tmp_path))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        'error: mpirun option --frobnicate is not known to towers-legacy; the command is mpirun '
        '[-np N] [-H host:slots,...] [options] python SCRIPT [FLAGS...]']


def test_a_collectives_error_line_gives_the_cause_not_the_task_it_came_from():
    message = ("Graph execution error:\n\nDetected at node 'HorovodAllgather_x/CollectiveGather'"
               "\nNode: 'HorovodAllgather_x/CollectiveGather'\nFrom /job:worker/replica:0/task:1:"
               "\nCollective ops is aborted by: Shape mismatch in the collective instance 7."
               "\n\t [[{{node HorovodAllgather_x/CollectiveGather}}]]")
    assert errors.tf_error_cause(message) == (
        'Collective ops is aborted by: Shape mismatch in the collective instance 7.')


def test_a_late_step_names_its_rank_and_collectives():
    world = ranks.World(rank=1, size=2, timeout=30)
    assert watchdog.late_line(world, ["allreduce of 'a:0'", "allreduce of 'b:0'",
                                      "allgather of 'c:0'", "broadcast of 'd:0' from rank 0"]) == (
        "rank 1: the allreduce of 'a:0', allreduce of 'b:0', allgather of 'c:0' and 1 more did "
        "not complete within 30 s: another rank stopped, or built another graph "
        "(towers-legacy --collective_timeout sets the bound)")
