"""Starts a whole training cluster on this machine, for a try-out of distributed training.

    python scripts/launch_local_cluster.py --ps 1 --workers 2 --num_gpus 2 -- \
        scripts/train_cifar10_multi_gpu.py --max_steps 1000
    python scripts/launch_local_cluster.py --ps 1 --workers 3 --evaluators 1 --tf_config -- \
        -m towers.legacy my_estimator_program.py --model_dir /tmp/model

Picks free localhost ports, starts the parameter servers and workers as processes of the
training script with the cluster flags (--job_name, --task_index, --ps_hosts, --worker_hosts)
and --num_gpus appended (with --tf_config: the role in each process's TF_CONFIG instead, as
Kubeflow's TFJob sets it), and streams each process's output with its role as prefix ('[ps0] ',
'[worker1] '). Exits with the first non-zero status of a process, after terminating the
others; or with 0 once every process has exited with 0. A parameter server still running
`--exit_grace` seconds after every worker has finished counts as hung. Terminating the
launcher terminates every process.

The processes run in a private network whose only interface is loopback, out of reach of
anything else on this machine or the network (TensorFlow's servers run any op for whoever
connects). Where the system allows none (no unprivileged user namespaces), one line says so and
what that exposes; --require_isolation then refuses to start.
"""
from towers import cli, flags
from towers.cluster import launcher
from towers.flags import FlagError


def _parse_args(argv):
    # The launcher's own flags first, so that --help and a bad flag answer without a "--".
    split = argv.index('--') if '--' in argv else len(argv)
    parser = flags.FlagParser(description=__doc__.split('\n\n')[0],
                              usage='%(prog)s [options] -- SCRIPT [FLAGS...]')
    parser.add_argument('--ps', type=flags.positive_int, default=1,
                        help='Number of parameter servers.')
    parser.add_argument('--workers', type=flags.positive_int, default=2,
                        help='Number of workers.')
    parser.add_argument('--num_gpus', type=flags.positive_int,
                        help='Towers per worker, passed on as --num_gpus.')
    parser.add_argument('--timeout', type=flags.positive_float,
                        help='Seconds after which every process is terminated (no limit by '
                             'default).')
    parser.add_argument('--exit_grace', type=flags.positive_float, default=60.0,
                        help='Seconds the other processes may take to exit after the workers '
                             'have finished, or after a failure, before they are terminated.')
    parser.add_boolean('tf_config', False,
                       'Give each process its role in the TF_CONFIG environment variable, as '
                       'Kubeflow\'s TFJob does (worker 0 as the chief), not in cluster flags.')
    parser.add_argument('--evaluators', type=flags.non_negative_int, default=0,
                        help='Tasks of type "evaluator" beside the cluster (with --tf_config: '
                             'a tf.estimator program\'s train_and_evaluate evaluates the '
                             'chief\'s checkpoints there).')
    parser.add_boolean('require_isolation', False,
                       'Start nothing unless the processes can run in a private network, '
                       'unreachable from outside it (unprivileged user namespaces).')
    args = parser.parse_args(argv[:split])
    if split == len(argv):
        raise FlagError('give the training script after "--", e.g. '
                        '`launch_local_cluster.py --ps 1 --workers 2 -- scripts/train.py`')
    args.command = argv[split + 1:]
    if not args.command:
        raise FlagError('no training script after "--"')
    return args


def main(argv):
    args = _parse_args(argv)
    return launcher.launch(args.command, args.ps, args.workers, num_gpus=args.num_gpus,
                           timeout=args.timeout, exit_grace=args.exit_grace,
                           use_tf_config=args.tf_config,
                           require_isolation=args.require_isolation,
                           num_evaluators=args.evaluators)


if __name__ == '__main__':
    cli.run(main)
