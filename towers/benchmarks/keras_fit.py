"""Times Keras `fit` under TensorFlow 2's `tf.distribute.MirroredStrategy`, in plain TensorFlow 2.

    python towers/benchmarks/keras_fit.py MODEL_JSON DEVICES GLOBAL_BATCH LOSS LEARNING_RATE \
        WARMUP_STEPS STEPS

What a TensorFlow 2 user runs today for a Keras model on several devices, the other side of
`towers.benchmarks.estimator`'s comparison: the model of MODEL_JSON (`model.to_json()`) built
and compiled (Adam at LEARNING_RATE, the loss LOSS) in the strategy's scope over DEVICES
devices (the first GPUs, else as many virtual CPU devices), then `fit` on one random in-memory
global batch of GLOBAL_BATCH repeated, WARMUP_STEPS untimed steps and STEPS timed ones, each
step timed by a callback. It prints one JSON line: {"median_step_sec": ..., "steps": ...}.

`towers.benchmarks.estimator` runs this file as a process of its own: the `towers` package
runs TensorFlow in graph mode, and this must not. It imports TensorFlow and tf_keras only.
"""
import json
import sys
import time


def _devices(tf, count):
    gpus = tf.config.list_physical_devices('GPU')
    if len(gpus) >= count:
        return ['/gpu:%d' % i for i in range(count)]
    cpu = tf.config.list_physical_devices('CPU')[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(count)])
    return ['/cpu:%d' % i for i in range(count)]


def measure(model_json, devices, global_batch, loss, learning_rate, warmup_steps, steps):
    """The median seconds of one `fit` step (see the module docstring)."""
    import numpy as np
    import tensorflow as tf
    import tf_keras

    strategy = tf.distribute.MirroredStrategy(devices=_devices(tf, devices))
    with strategy.scope():
        model = tf_keras.models.model_from_json(model_json)
        model.compile(optimizer=tf_keras.optimizers.Adam(learning_rate), loss=loss)
    rng = np.random.RandomState(0)
    inputs = rng.uniform(size=(global_batch,) + tuple(model.input_shape[1:])).astype(np.float32)
    classes = model.output_shape[-1]
    labels = np.eye(classes, dtype=np.float32)[rng.randint(0, classes, global_batch)]
    dataset = tf.data.Dataset.from_tensors((inputs, labels)).repeat()
    times = []

    class StepTimer(tf_keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            self.started = time.perf_counter()

        def on_train_batch_end(self, batch, logs=None):
            times.append(time.perf_counter() - self.started)

    model.fit(dataset, steps_per_epoch=warmup_steps + steps, epochs=1, verbose=0,
              callbacks=[StepTimer()])
    return float(np.median(times[warmup_steps:]))


def main(argv):
    model_json_path, devices, global_batch, loss, learning_rate, warmup, steps = argv[1:8]
    with open(model_json_path) as f:
        model_json = f.read()
    median = measure(model_json, int(devices), int(global_batch), loss, float(learning_rate),
                     int(warmup), int(steps))
    print(json.dumps({'median_step_sec': median, 'steps': int(steps)}))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
