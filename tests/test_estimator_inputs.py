"""`tf.estimator.inputs.numpy_input_fn` and `pandas_input_fn` as a TF 1.15 user saw them: shuffle
must be given, batches in order without shuffling, epochs, the last partial batch, the end of
the input, features shaped as x was given."""
import numpy as np
import pytest

from towers.compat import tf
from towers.legacy.estimator.inputs import numpy_input_fn
from towers.legacy.estimator.spec import EstimatorError


def _all_batches(tensors):
    """Every batch until the input ends (`OutOfRangeError`), as TF 1.x's training saw them."""
    batches = []
    with tf.Session() as session:
        while True:
            try:
                batches.append(session.run(tensors))
            except tf.errors.OutOfRangeError:
                return batches


def test_numpy_input_fn_refuses_a_shuffle_not_given():
    with pytest.raises(EstimatorError, match='shuffle must be provided'):
        numpy_input_fn({'a': np.arange(3)})


def test_numpy_batches_follow_the_rows_over_epochs_and_end_with_a_partial_batch():
    x = {'a': np.arange(10.), 'b': np.arange(10, 20)}
    features, labels = numpy_input_fn(x, np.arange(10) * 2, batch_size=4, num_epochs=2,
                                      shuffle=False)()
    batches = _all_batches((features, labels))
    assert [len(batch_labels) for _, batch_labels in batches] == [4, 4, 4, 4, 4]
    assert np.concatenate([f['a'] for f, _ in batches]).tolist() == list(range(10)) * 2
    assert np.concatenate([labels for _, labels in batches]).tolist() == \
        [2 * i for i in range(10)] * 2
    assert features['a'].dtype == tf.float64 and features['b'].dtype == tf.int64

    partial = _all_batches(numpy_input_fn(x, batch_size=4, shuffle=False)())
    assert [len(batch['a']) for batch in partial] == [4, 4, 2]


def test_numpy_without_num_epochs_gives_full_batches_for_ever():
    features = numpy_input_fn(np.arange(5), batch_size=4, num_epochs=None, shuffle=False)()
    assert features.shape.as_list() == [4]
    with tf.Session() as session:
        rows = np.concatenate([session.run(features) for _ in range(5)])
    assert rows.tolist() == list(range(5)) * 4


def test_numpy_array_x_gives_one_tensor_and_dict_y_a_dict_of_labels():
    features, labels = numpy_input_fn(np.ones([3, 2]), {'y': np.arange(3), 'z': np.zeros(3)},
                                      shuffle=False)()
    assert tf.is_tensor(features) and features.shape.as_list() == [None, 2]
    assert set(labels) == {'y', 'z'}


def test_numpy_shuffle_draws_each_epoch_as_a_new_order_of_every_row():
    tf.set_random_seed(0)
    features = numpy_input_fn({'a': np.arange(50)}, batch_size=50, num_epochs=2,
                              shuffle=True)()
    first, second = [batch['a'] for batch in _all_batches(features)]
    assert sorted(first) == sorted(second) == list(range(50))
    assert first.tolist() != list(range(50)) and first.tolist() != second.tolist()


def test_numpy_input_fn_refuses_x_and_y_of_different_lengths_and_shared_keys():
    with pytest.raises(EstimatorError, match='Length of tensors in x and y is mismatched'):
        numpy_input_fn({'a': np.arange(3)}, np.arange(4), shuffle=False)
    with pytest.raises(EstimatorError, match='duplicate keys'):
        numpy_input_fn({'a': np.arange(3)}, {'a': np.arange(3)}, shuffle=False)
    with pytest.raises(TypeError, match='x must be a dict or array'):
        numpy_input_fn([1, 2, 3], shuffle=False)
