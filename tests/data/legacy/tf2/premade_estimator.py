"""TensorFlow 2's premade-Estimator tutorial program (tensorflow.org, "Premade Estimators"), as
its users ran it on TF 2.0-2.15: eager TensorFlow around a `tf.estimator.DNNClassifier` over
`tf.feature_column`s, the iris CSVs through `tf.keras.utils.get_file` and pandas. Usage:
`premade_estimator.py [STEPS]` (200 by default); it prints the evaluation as `eval: {...}`."""
import sys

import pandas as pd
import tensorflow as tf

CSV_COLUMN_NAMES = ['SepalLength', 'SepalWidth', 'PetalLength', 'PetalWidth', 'Species']
SPECIES = ['Setosa', 'Versicolor', 'Virginica']

t = tf.constant([1.0, 2.0])
print('eager:', tf.executing_eagerly(), (t * 2).numpy())

train_path = tf.keras.utils.get_file(
    'iris_training.csv', 'https://storage.googleapis.com/download.tensorflow.org/data/iris_training.csv')
test_path = tf.keras.utils.get_file(
    'iris_test.csv', 'https://storage.googleapis.com/download.tensorflow.org/data/iris_test.csv')
train = pd.read_csv(train_path, names=CSV_COLUMN_NAMES, header=0)
test = pd.read_csv(test_path, names=CSV_COLUMN_NAMES, header=0)
train_y = train.pop('Species')
test_y = test.pop('Species')


def input_fn(features, labels, training=True, batch_size=256):
    dataset = tf.data.Dataset.from_tensor_slices((dict(features), labels))
    if training:
        dataset = dataset.shuffle(1000).repeat()
    return dataset.batch(batch_size)


my_feature_columns = [tf.feature_column.numeric_column(key=key) for key in train.keys()]
classifier = tf.estimator.DNNClassifier(feature_columns=my_feature_columns, hidden_units=[30, 10],
                                        n_classes=3)
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
classifier.train(input_fn=lambda: input_fn(train, train_y, training=True), steps=steps)
eval_result = classifier.evaluate(input_fn=lambda: input_fn(test, test_y, training=False))
print('eval:', {key: float(value) for key, value in sorted(eval_result.items())})
print('\nTest set accuracy: {accuracy:0.3f}\n'.format(**eval_result))

expected = ['Setosa', 'Versicolor', 'Virginica']
predict_x = {'SepalLength': [5.1, 5.9, 6.9], 'SepalWidth': [3.3, 3.0, 3.1],
             'PetalLength': [1.7, 4.2, 5.4], 'PetalWidth': [0.5, 1.5, 2.1]}


def predict_input_fn(features, batch_size=256):
    return tf.data.Dataset.from_tensor_slices(dict(features)).batch(batch_size)


for pred_dict, expec in zip(classifier.predict(input_fn=lambda: predict_input_fn(predict_x)),
                            expected):
    class_id = pred_dict['class_ids'][0]
    probability = pred_dict['probabilities'][class_id]
    print('Prediction is "{}" ({:.1f}%), expected "{}"'.format(SPECIES[class_id],
                                                               100 * probability, expec))
print('after: eager', tf.executing_eagerly(), tf.reduce_sum(t).numpy())
