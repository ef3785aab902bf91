"""TensorFlow 2's "Create an Estimator from a Keras model" tutorial program (tensorflow.org), as
its users ran it on TF 2.0-2.15: a compiled `tf.keras` Sequential model, its input pipeline
tried eagerly, then `tf.keras.estimator.model_to_estimator`'s Estimator trained and evaluated.
The iris rows come from the CSV of the premade-Estimator tutorial (through `get_file`) instead
of `tensorflow_datasets`. Usage: `keras_to_estimator.py MODEL_DIR [STEPS]` (500 by default);
it prints the evaluation as `eval: {...}`."""
import sys

import numpy as np
import tensorflow as tf

path = tf.keras.utils.get_file(
    'iris_training.csv', 'https://storage.googleapis.com/download.tensorflow.org/data/iris_training.csv')
rows = np.loadtxt(path, delimiter=',', skiprows=1, dtype=np.float32)
features, labels = rows[:, :4], rows[:, 4].astype(np.int64)

model = tf.keras.models.Sequential([
    tf.keras.layers.Dense(16, activation='relu', input_shape=(4,)),
    tf.keras.layers.Dropout(0.2),
    tf.keras.layers.Dense(3)
])
model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              optimizer='adam')
model.summary()


def input_fn():
    dataset = tf.data.Dataset.from_tensor_slices((features, labels))
    dataset = dataset.map(lambda x, y: ({'dense_input': x}, y))
    return dataset.batch(32).repeat()


for features_batch, labels_batch in input_fn().take(1):
    print('eager batch:', features_batch['dense_input'].shape, labels_batch.numpy()[:5])

model_dir = sys.argv[1]
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 500
keras_estimator = tf.keras.estimator.model_to_estimator(keras_model=model, model_dir=model_dir)
keras_estimator.train(input_fn=input_fn, steps=steps)
eval_result = keras_estimator.evaluate(input_fn=input_fn, steps=10)
print('eval:', {key: float(value) for key, value in sorted(eval_result.items())})
print('Eval result: {}'.format(eval_result))
