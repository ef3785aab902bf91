"""Writes a Keras model's `.weights.h5` file from its TF2 checkpoint, in plain TensorFlow 2.

    python towers/export/keras_weights.py MODEL_JSON CHECKPOINT_PREFIX OUT.weights.h5

`towers.export` runs this file as a process of its own: Keras writes `.weights.h5` files from
eager variables only, and a process that imported `towers` runs TensorFlow in graph mode. It
imports TensorFlow and tf_keras, not the `towers` package: it rebuilds the model from its JSON
configuration (`model.to_json()`), restores the TF2 object-based checkpoint
(`tf.train.Checkpoint(model=model)`), checking that every value of it found its variable and
every variable its value, and saves the weights with `model.save_weights`, which
`model.load_weights` reads back into the same architecture built in plain tf_keras.

On a failure it prints one `error:` line and exits with status 1.
"""
import sys


def write(model_json, checkpoint_prefix, out):
    """Restores the model of the JSON file `model_json` from `checkpoint_prefix` and writes its
    weights to `out` (a name ending in '.weights.h5')."""
    import tensorflow as tf
    import tf_keras

    with open(model_json) as f:
        model = tf_keras.models.model_from_json(f.read())
    checkpoint = tf.train.Checkpoint(model=model)
    status = checkpoint.restore(checkpoint_prefix)
    status.assert_consumed()
    model.save_weights(out)
    # Released now: TensorFlow's restore bookkeeping fails in its destructor at interpreter exit.
    del status, checkpoint


def main(argv):
    if len(argv) != 3:
        print('error: usage: keras_weights.py MODEL_JSON CHECKPOINT_PREFIX OUT.weights.h5',
              file=sys.stderr)
        return 1
    try:
        write(*argv)
    except (AssertionError, OSError, ValueError) as err:
        print('error: %s' % str(err).strip().splitlines()[0], file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
