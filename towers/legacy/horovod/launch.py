"""Starting a Horovod job's ranks: one process per device, as `horovodrun` and `mpirun` did.

    towers-legacy [RUNNER OPTIONS] --np 2 train.py --epochs 3
    towers-legacy [RUNNER OPTIONS] horovodrun -np 2 -H localhost:2 python train.py --epochs 3
    towers-legacy mpirun -np 2 -bind-to none -map-by slot -x NCCL_DEBUG=INFO python train.py

Each rank is `python -m towers.legacy [RUNNER OPTIONS] train.py ...` with its place in
Horovod's environment variables (`towers.legacy.horovod.ranks`), started, watched and stopped by
`towers.cluster.launcher`: output lines prefixed '[rank0] ', the first rank to fail ends the
others, Ctrl-C and SIGTERM reach them all; on one machine the ranks run in a private network
whose only interface is loopback.

Several machines (`-H host1:4,host2:4`, or `--hostfile` with 'host slots=4' lines): the same
command runs on every host, each starting its own ranks (ranks fill the hosts in the order
given); a host finds itself in the list by its name, or by `--host_index`. Rank r listens on
port `--port` + r of its host, on the machine's network (a line says what that exposes; see
docs/security.md).

`horovodrun`'s and `mpirun`'s options that only tuned Horovod's or MPI's own machinery (fusion,
cycle time, binding, MCA parameters, ssh) are accepted and have nothing to tune here; `-x
NAME=VALUE` sets a variable for the ranks. Nothing here imports TensorFlow.
"""
import argparse
import os
import socket
import sys

from towers import flags
from towers.cluster import launcher
from towers.legacy.horovod import ranks
from towers.legacy.horovod.ranks import DEFAULT_TIMEOUT, World

LAUNCHERS = ('horovodrun', 'mpirun', 'mpiexec')
PYTHON_VALUE_OPTIONS = ('-W', '-X', '-c')
# The runner's own options that take a value (`towers.legacy.runner`), and the launch's.
RUNNER_VALUE_OPTIONS = ('--legacy_devices', '--seed', '--precise_bn_batches')
LAUNCH_VALUE_OPTIONS = ('--np', '-np', '-H', '--hosts', '--hostfile', '--host_index', '--port',
                        '--collective_timeout', '--timeout')
# horovodrun's and mpirun's options: those taking a value, those taking two, the others.
FOREIGN_VALUE_OPTIONS = (
    '-np', '--num-proc', '-n', '-c', '--np', '-H', '--hosts', '--host', '-host', '-hostfile',
    '--hostfile', '-machinefile', '--machinefile', '-x', '-p', '--ssh-port', '-i',
    '--ssh-identity-file', '--network-interface', '--network-interfaces', '--start-timeout',
    '--fusion-threshold-mb', '--cycle-time-ms', '--cache-capacity', '--timeline-filename',
    '--log-level', '--output-filename', '--mpi-args', '--autotune-log-file', '-bind-to',
    '--bind-to', '-map-by', '--map-by', '-rank-by', '--rank-by', '-npernode', '--npernode',
    '-N', '-wdir', '--wdir', '-output-filename', '--prefix', '--config-file', '-mca-param-file')
FOREIGN_PAIR_OPTIONS = ('-mca', '--mca', '-gmca', '--gmca')
FOREIGN_SWITCHES = (
    '--verbose', '--disable-cache', '--gloo', '--mpi', '--jsrun', '--tcp',
    '--hierarchical-allreduce', '--no-hierarchical-allreduce', '--hierarchical-allgather',
    '--no-hierarchical-allgather', '--autotune', '--timeline-mark-cycles',
    '--no-stall-check', '--allow-run-as-root', '-allow-run-as-root', '--oversubscribe',
    '-oversubscribe', '--tag-output', '-tag-output', '--report-bindings', '-report-bindings',
    '-v', '--display-map', '-display-map', '-q', '--quiet', '--timestamp-output')
DEFAULT_PORT = 29500


def is_command(argv):
    """Whether `argv` (towers-legacy's arguments) asks for a Horovod job: `--np` among the
    runner's options, or `horovodrun`/`mpirun` after them."""
    runner = _runner_part(argv)
    if len(argv) > len(runner) and argv[len(runner)] in LAUNCHERS:
        return True
    return any(token in ('--np', '-np') or token.startswith('--np=') for token in runner)


def _runner_part(argv):
    """The runner's options of `argv`: its tokens before the script."""
    return flags.leading_options(argv, RUNNER_VALUE_OPTIONS + LAUNCH_VALUE_OPTIONS)


class Job:
    """A parsed launch: how many ranks, where, and what each runs.

    Attributes:
      np: number of ranks; hosts: list of (host, slots); host_index: this machine's entry;
      port: the first rank's port (several machines); timeout: seconds a collective waits;
      runner_options: the runner's options for every rank; script, script_argv: the program
        (script None and module its module, for one run as `python -m module`);
      env: variables for the ranks (`-x NAME=VALUE`); run_timeout: seconds for the whole job;
      require_isolation: refuse to run outside a private network.
    """

    def __init__(self):
        self.np, self.hosts, self.host_index, self.port = None, None, None, DEFAULT_PORT
        self.timeout, self.run_timeout, self.require_isolation = DEFAULT_TIMEOUT, None, False
        self.runner_options, self.script, self.script_argv, self.env = [], None, [], {}
        self.module = None


def parse(argv):
    """Reads a launch command line (see the module docstring) into a `Job`.

    Raises:
      FlagError: a bad option, a bad host list, or no program.
    """
    job = Job()
    runner = _runner_part(argv)
    _parse_own(runner, job)
    rest = argv[len(runner):]
    if rest and rest[0] in LAUNCHERS:
        command = _parse_foreign(rest[0], rest[1:], job)
        job.script, job.script_argv = _python_command(rest[0], command)
    else:
        if rest and rest[0] == '--':
            rest = rest[1:]
        if not rest:
            raise flags.FlagError('give the script to run: towers-legacy --np N SCRIPT [FLAGS...]')
        job.script, job.script_argv = rest[0], rest[1:]
    if job.script == flags.MODULE_OPTION:
        if not job.script_argv:
            raise flags.FlagError('-m needs the module to run')
        job.script, job.module, job.script_argv = None, job.script_argv[0], job.script_argv[1:]
    if job.np is None:
        raise flags.FlagError('give the number of ranks: --np N (or -np N)')
    if job.script is not None and not os.path.isfile(job.script):
        raise flags.FlagError('cannot run %s: no such file' % job.script)
    job.hosts = job.hosts or [('localhost', job.np)]
    if sum(slots for _, slots in job.hosts) < job.np:
        raise flags.FlagError('-np %d ranks, but the hosts %s have %d slots; give each host '
                              'host:slots' % (job.np, _shown(job.hosts),
                                              sum(slots for _, slots in job.hosts)))
    return job


def _value(argv, index, option):
    if index + 1 >= len(argv):
        raise flags.FlagError('%s needs a value' % option)
    return argv[index + 1]


def _parse_own(tokens, job):
    index = 0
    while index < len(tokens):
        token, value = tokens[index], None
        if '=' in token and token.startswith('--'):
            token, value = token.split('=', 1)
            step = 1
        elif token in LAUNCH_VALUE_OPTIONS + RUNNER_VALUE_OPTIONS:
            value, step = _value(tokens, index, token), 2
        else:
            step = 1
        if token in LAUNCH_VALUE_OPTIONS:
            _set_launch_option(job, token, value)
        elif token == '--require_isolation':
            job.require_isolation = True
        elif token == '--share_gpus':
            job.env[ranks.SHARE_GPUS] = '1'
        else:
            job.runner_options += [token] if value is None else [token, value]
        index += step


def _typed(kind, option, value):
    try:
        return kind(value)
    except (ValueError, argparse.ArgumentTypeError) as err:
        raise flags.FlagError('%s %s: %s' % (option, value, err)) from None


def _set_launch_option(job, option, value):
    if option in ('--np', '-np'):
        job.np = _typed(flags.positive_int, option, value)
    elif option in ('-H', '--hosts'):
        job.hosts = _hosts(value, option)
    elif option == '--hostfile':
        job.hosts = _hostfile(value)
    elif option == '--host_index':
        job.host_index = _typed(flags.non_negative_int, option, value)
    elif option == '--port':
        job.port = _typed(flags.positive_int, option, value)
    elif option == '--collective_timeout':
        job.timeout = _typed(flags.non_negative_float, option, value)
    elif option == '--timeout':
        job.run_timeout = _typed(flags.positive_float, option, value)


def _hosts(text, option):
    hosts = []
    for entry in text.split(','):
        host, _, slots = entry.partition(':')
        try:
            count = int(slots) if slots else 1
        except ValueError:
            count = 0
        if not host or count < 1:
            raise flags.FlagError('%s %s: expected host:slots[,host:slots...], e.g. '
                                  'localhost:2 or host1:4,host2:4' % (option, text))
        hosts.append((host, count))
    return hosts


def _hostfile(path):
    try:
        with open(path) as lines:
            entries = [line.split('#')[0].split() for line in lines]
    except OSError as err:
        raise flags.FlagError('--hostfile %s: %s' % (path, err.strerror)) from None
    hosts = []
    for number, entry in enumerate(entries, 1):
        if not entry:
            continue
        slots = [field for field in entry[1:] if field.startswith('slots=')]
        try:
            count = int(slots[0][len('slots='):]) if slots else 1
        except ValueError:
            count = 0
        if count < 1:
            raise flags.FlagError('--hostfile %s:%d: expected "host slots=N"' % (path, number))
        hosts.append((entry[0], count))
    if not hosts:
        raise flags.FlagError('--hostfile %s names no host' % path)
    return hosts


def _parse_foreign(launcher_name, argv, job):
    """Reads horovodrun's or mpirun's options into `job`; returns the command after them."""
    index = 0
    while index < len(argv) and argv[index].startswith('-'):
        token, value = argv[index], None
        if token.startswith('--') and '=' in token:
            token, value = token.split('=', 1)
            step = 1
        elif token in FOREIGN_VALUE_OPTIONS:
            value, step = _value(argv, index, token), 2
        elif token in FOREIGN_PAIR_OPTIONS:
            _value(argv, index + 1, token)
            step = 3
        elif token in FOREIGN_SWITCHES:
            step = 1
        else:
            raise flags.FlagError('%s option %s is not known to towers-legacy; the command '
                                  'is %s [-np N] [-H host:slots,...] [options] python SCRIPT '
                                  '[FLAGS...]' % (launcher_name, token, launcher_name))
        if token in ('-np', '--num-proc', '-n', '-c', '--np'):
            job.np = _typed(flags.positive_int, token, value)
        elif token in ('-H', '--hosts', '--host', '-host'):
            job.hosts = _hosts(value, token)
        elif token in ('-hostfile', '--hostfile', '-machinefile', '--machinefile'):
            job.hosts = _hostfile(value)
        elif token == '-x' and '=' in value:
            name, setting = value.split('=', 1)
            job.env[name] = setting
        index += step
    return argv[index:]


def _python_command(launcher_name, command):
    """(script, its argv) of 'python [-u ...] script.py args' (or 'script.py args'); ('-m',
    [module, args...]) of 'python -m module args'."""
    if command and os.path.basename(command[0]).startswith('python'):
        index = 1
        while index < len(command) and command[index].startswith('-'):
            if command[index] == flags.MODULE_OPTION:
                _value(command, index, flags.MODULE_OPTION)
                return command[index], command[index + 1:]
            index += 2 if command[index] in PYTHON_VALUE_OPTIONS else 1
        command = command[index:]
    if not command:
        raise flags.FlagError('%s: give the program, e.g. %s -np 2 python train.py'
                              % (launcher_name, launcher_name))
    return command[0], command[1:]


def _shown(hosts):
    return ','.join('%s:%d' % host for host in hosts)


def _this_host(job):
    if job.host_index is not None:
        if job.host_index >= len(job.hosts):
            raise flags.FlagError('--host_index %d: the hosts %s are numbered 0..%d'
                                  % (job.host_index, _shown(job.hosts), len(job.hosts) - 1))
        return job.host_index
    if len(job.hosts) == 1:
        return 0
    names = {'localhost', '127.0.0.1', socket.gethostname(), socket.getfqdn()}
    mine = [index for index, (host, _) in enumerate(job.hosts) if host in names]
    if len(mine) != 1:
        raise flags.FlagError('-H %s: %s; give --host_index I (this machine\'s place in the '
                              'list, from 0)' % (_shown(job.hosts), 'this machine (%s) is not '
                              'among them' % socket.gethostname() if not mine else
                              'this machine is several of them'))
    return mine[0]


def worlds(job):
    """The `World` of each rank of `job` (ranks fill the hosts in order), and this host's."""
    placed = []
    for host_index, (host, slots) in enumerate(job.hosts):
        for local in range(slots):
            if len(placed) < job.np:
                placed.append((host_index, host, local))
    used_hosts = sorted({host_index for host_index, _, _ in placed})
    result = []
    for rank, (host_index, host, local) in enumerate(placed):
        local_size = sum(1 for index, _, _ in placed if index == host_index)
        result.append((host_index, World(
            rank, job.np, local, local_size, used_hosts.index(host_index), len(used_hosts),
            timeout=job.timeout)))
    return result


def main(argv):
    """Parses a launch command, starts this machine's ranks, returns the job's exit status."""
    job = parse(argv)
    placed = worlds(job)
    several_hosts = len({host_index for host_index, _ in placed}) > 1
    if several_hosts:
        here = _this_host(job)
        addresses = ['%s:%d' % (job.hosts[host_index][0], job.port + world.rank)
                     for host_index, world in placed]
        ports = [job.port + world.rank for host_index, world in placed if host_index == here]
    else:
        here = 0
        ports = launcher.free_local_ports(job.np)
        addresses = ['localhost:%d' % port for port in ports]
    processes = []
    for host_index, world in placed:
        if host_index != here:
            continue
        world.addresses = addresses
        env = dict(job.env, **world.environment())
        processes.append(launcher.Process('rank%d' % world.rank, [
            sys.executable, '-m', 'towers.legacy'] + _rank_options(job.runner_options,
                                                                    world.rank)
            + ([flags.MODULE_OPTION, job.module] if job.module else [job.script])
            + job.script_argv, env))
    heading = 'Horovod job of %d ranks%s: ranks %s here; a step waits for its collectives %s' % (
        job.np, ' on %s' % _shown(job.hosts) if several_hosts else '',
        ', '.join(str(world.rank) for host_index, world in placed if host_index == here),
        'at most %.0f s' % job.timeout if job.timeout else 'without a bound')
    return launcher.run_processes(processes, ports, heading, timeout=job.run_timeout,
                                  require_isolation=job.require_isolation,
                                  private=not several_hosts)


def _rank_options(options, rank):
    """The runner's options for rank `rank`: `--seed N` becomes N + rank (with
    `--deterministic` and no seed, the seed is the rank), so that the ranks draw different
    dropout and shuffles, as separate processes of a Horovod job did."""
    options = list(options)
    for index, option in enumerate(options):
        if option in ('--seed', '-seed') and index + 1 < len(options):
            options[index + 1] = str(int(options[index + 1]) + rank)
            return options
        if option.startswith('--seed='):
            options[index] = '--seed=%d' % (int(option.split('=', 1)[1]) + rank)
            return options
    if '--deterministic' in options:
        options += ['--seed', str(rank)]
    return options
