"""`--legacy_devices N`: a script's '/gpu:i' towers on the devices `configure_devices(N)` makes,
and TF 1.x's mutable `DeviceSpec` at its private path.

A TF1 script names its towers '/gpu:0' .. '/gpu:N-1' and creates its own sessions. On a machine
with fewer GPUs, `towers.configure_devices` decides what the N towers run on: logical GPUs
split from the GPUs there are (their names stay '/gpu:i'), or, without a GPU, N virtual CPU
devices ('/cpu:i'). `DeviceMap` carries that decision into the script: every session it creates
(`tf.Session`, `tf.InteractiveSession`, and through them `MonitoredTrainingSession`,
`Supervisor`, slim's training loop, the Estimator) gets the devices in its config, and, on
virtual CPU devices, every device scope the script opens ('/gpu:i', or a device function
returning it) is renamed '/cpu:i'. A script that counts its GPUs before building towers
(`tf.test.is_gpu_available()`, `device_lib.list_local_devices()`,
`tf.config.list_logical_devices('GPU')`) finds the N it was promised: virtual CPU devices are
listed as the GPUs '/device:GPU:i' they stand in for (`tf.test.is_built_with_cuda()` stays
TensorFlow's own answer).
"""
import copy
import importlib

from towers.compat import tf
from towers.devices import configure_devices

# The private modules a TF1 script lists its devices and parses device names through.
device_lib = importlib.import_module('tensorflow.python.client.device_lib')
framework_device = importlib.import_module('tensorflow.python.framework.device')


def use_tf1_device_spec():
    """Makes `tensorflow.python.framework.device.DeviceSpec` TF 1.x's mutable `DeviceSpec`
    (`merge_from`, `parse_from_string`, settable `job`, `task`, `device_type`, ...), which
    TensorFlow itself picks there when v2 behaviour is off before it is imported; it is
    `tf.DeviceSpec` of `tf.compat.v1`."""
    framework_device.DeviceSpec = tf.DeviceSpec


class DeviceMap:
    """The N devices of `--legacy_devices N`, under the names the script uses.

    Args:
      num_devices: N, the script's towers.
      usage: the `Usage` that records the mapping once it is used.
      physical_gpus: GPUs of this machine; those TensorFlow sees by default.

    Attributes:
      num_devices: N.
      on_cpu: whether the towers are virtual CPU devices (no GPU on this machine).
      description: one line saying what '/gpu:i' is.
    """

    def __init__(self, num_devices, usage, physical_gpus=None):
        setup = configure_devices(num_devices, physical_gpus=physical_gpus)
        self.num_devices = num_devices
        self._usage = usage
        self.on_cpu = setup.tower_devices[0].startswith('/cpu')
        self._virtual_gpus = list(setup.config.gpu_options.experimental.virtual_devices)
        if self.on_cpu:
            what = 'virtual CPU devices /cpu:0../cpu:%d (no GPU found)' % (num_devices - 1)
        elif self._virtual_gpus:
            what = 'logical GPUs split from %d GPU(s)' % len(self._virtual_gpus)
        else:
            what = 'GPUs'
        self.description = ('--legacy_devices %d: /gpu:0../gpu:%d are %s'
                            % (num_devices, num_devices - 1, what))

    def device(self, name_or_function):
        """What a device scope of the script becomes.

        Args:
          name_or_function: as `tf.device` takes it: a device string or `tf.DeviceSpec`, a
            device function (op -> device), or None.

        Returns:
          The same, with a GPU device renamed to the CPU device of its index when the towers
          are virtual CPU devices ('/job:worker/gpu:1' -> '/job:worker/device:CPU:1'); the
          first renaming is recorded in the usage.
        """
        if not self.on_cpu or name_or_function is None:
            return name_or_function
        if callable(name_or_function):
            return lambda op: self.device(name_or_function(op))
        spec = tf.DeviceSpec.from_string(
            name_or_function if isinstance(name_or_function, str)
            else name_or_function.to_string())
        if (spec.device_type or '').upper() != 'GPU':
            return name_or_function
        self._usage.add(self.description)
        return spec.replace(device_type='CPU').to_string()

    def session_config(self, config):
        """A copy of the script's session config (a `tf.ConfigProto` or None) that also makes
        the N devices: at least N CPU devices, or the logical GPUs unless it splits the GPUs
        itself. Every other setting stays the script's."""
        merged = tf.ConfigProto()
        if config is not None:
            merged.CopyFrom(config)
        if self.on_cpu:
            merged.device_count['CPU'] = max(merged.device_count.get('CPU', 1),
                                             self.num_devices)
        elif not merged.gpu_options.experimental.virtual_devices:
            merged.gpu_options.experimental.virtual_devices.extend(self._virtual_gpus)
        return merged

    def local_devices(self, list_devices, session_config=None):
        """What `device_lib.list_local_devices(session_config)` gives the script.

        Args:
          list_devices: TensorFlow's `device_lib.list_local_devices`.
          session_config: the script's `tf.ConfigProto`, or None.

        Returns:
          The `DeviceAttributes` of the devices a session of the script gets (`session_config`
          merged as `session_config` merges it); on virtual CPU devices, the CPU followed by
          N GPUs named '/device:GPU:i', each described as the CPU device it stands in for.
        """
        devices = list_devices(self.session_config(session_config))
        if not self.on_cpu:
            return devices
        cpus = [device for device in devices if device.device_type == 'CPU']
        gpus = []
        for index, cpu in enumerate(cpus[:self.num_devices]):
            gpu = copy.deepcopy(cpu)
            gpu.name, gpu.device_type = '/device:GPU:%d' % index, 'GPU'
            gpu.physical_device_desc = ('virtual CPU device %s standing in for /gpu:%d '
                                        '(towers-legacy --legacy_devices %d)'
                                        % (cpu.name, index, self.num_devices))
            gpus.append(gpu)
        return cpus[:1] + [device for device in devices if device.device_type != 'CPU'] + gpus

    def logical_devices(self, list_devices, device_type=None):
        """What `tf.config.list_logical_devices(device_type)` gives the script: the devices of
        `local_devices` (the GPUs of a session of the script, not of eager execution, which a
        TF1 script does not use) as `tf.config.LogicalDevice`s, those of `device_type` only
        if it is given."""
        return [tf.config.LogicalDevice(name=device.name, device_type=device.device_type)
                for device in self.local_devices(list_devices)
                if device_type is None or device.device_type == device_type]

    def install(self):
        """Makes the script's device scopes and sessions go through `device` and
        `session_config`, and its device listings through `local_devices` and
        `logical_devices`, patching `tf.Graph.device`, the sessions' constructors,
        `device_lib.list_local_devices` and `tf.config.list_logical_devices` for the rest of
        the process; the first session made or listing asked for is recorded in the usage."""
        graph_device = tf.Graph.device
        tf.Graph.device = lambda graph, name_or_function: graph_device(
            graph, self.device(name_or_function))
        for session_class in (tf.Session, tf.InteractiveSession):
            session_class.__init__ = self._session_init(session_class.__init__)
        list_devices = device_lib.list_local_devices

        def list_local_devices(session_config=None):
            self._usage.add(self.description)
            return self.local_devices(list_devices, session_config)

        def list_logical_devices(device_type=None):
            self._usage.add(self.description)
            return self.logical_devices(list_devices, device_type)
        device_lib.list_local_devices = list_local_devices
        tf.config.list_logical_devices = list_logical_devices
        tf.config.experimental.list_logical_devices = list_logical_devices

    def _session_init(self, init):
        def session_init(session, target='', graph=None, config=None):
            self._usage.add(self.description)
            init(session, target, graph, self.session_config(config))
        return session_init
