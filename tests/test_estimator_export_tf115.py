"""`tf.estimator.export`'s receivers and exporters behave as TF 1.15's: what they accept,
what they refuse (ValueErrors with TF 1.15's phrases), the placeholders the builders make, and
TensorFlow's SavedModel helpers at TF 1.15's names."""
import os

import pytest

from towers.compat import tf
from towers.legacy.estimator import export
from towers.legacy.estimator.exporter import BestExporter, BestExporterV2, LatestExporter
from towers.legacy.estimator.spec import EstimatorSpec, ModeKeys


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


class _LabeledTensor:
    """An object with a `.tensor` that converts to a `Tensor`, as contrib's LabeledTensor."""

    def __init__(self):
        self.tensor = tf.constant([1])


tf.register_tensor_conversion_function(
    _LabeledTensor, lambda value, dtype=None, name=None, as_ref=False: value.tensor)


def test_serving_receiver_accepts_int_feature_keys_and_wraps_a_lone_receiver_as_input():
    receiver = export.ServingInputReceiver({42: tf.constant([3]), 'a': tf.constant([1])},
                                           tf.constant(['x']))
    assert set(receiver.features) == {42, 'a'} and list(receiver.receiver_tensors) == ['input']


def test_serving_receiver_names_the_missing_field_as_tf115_did():
    with pytest.raises(ValueError, match='features must be defined'):
        export.ServingInputReceiver(None, tf.constant(['x']))
    with pytest.raises(ValueError, match='receiver_tensors must be defined'):
        export.ServingInputReceiver(tf.constant([1]), None)


def test_serving_receiver_refuses_bad_keys_and_values_with_tf115s_phrases():
    receiver = {'examples': tf.constant(['x'])}
    with pytest.raises(ValueError, match='feature keys must be strings or ints'):
        export.ServingInputReceiver({4.2: tf.constant([1])}, receiver)
    with pytest.raises(ValueError, match='receiver_tensor keys must be strings'):
        export.ServingInputReceiver(tf.constant([1]), {1: tf.constant(['x'])})
    with pytest.raises(ValueError, match='feature f1 must be a Tensor or SparseTensor'):
        export.ServingInputReceiver({'f1': [1]}, receiver)
    with pytest.raises(ValueError, match='receiver_tensors_alternatives must be a dict'):
        export.ServingInputReceiver(tf.constant([1]), receiver, [receiver])


def test_a_labeled_tensor_is_accepted_as_a_feature():
    labeled = _LabeledTensor()
    assert export.ServingInputReceiver(labeled, tf.constant(['x'])).features == {
        'feature': labeled}


def test_tensor_serving_receiver_refuses_none_and_a_dict_of_features():
    receiver = {'examples': tf.constant(['x'])}
    with pytest.raises(ValueError, match='features must be defined'):
        export.TensorServingInputReceiver(None, receiver)
    with pytest.raises(ValueError, match='feature must be a Tensor'):
        export.TensorServingInputReceiver({'a': tf.constant([1])}, receiver)


def test_unsupervised_receiver_is_a_serving_receiver_without_alternatives():
    receiver = export.UnsupervisedInputReceiver({'a': tf.constant([1])}, tf.constant(['x']))
    assert isinstance(receiver, export.ServingInputReceiver)
    assert receiver.receiver_tensors_alternatives is None


def test_supervised_receiver_keeps_features_and_labels_as_given_and_checks_them():
    features, labels = tf.SparseTensor([[0, 0]], [1], [1, 1]), tf.constant([0])
    receiver = export.SupervisedInputReceiver(features, labels, tf.constant(['x']))
    assert receiver.features is features and receiver.labels is labels
    assert list(receiver.receiver_tensors) == ['input']
    with pytest.raises(ValueError, match='label keys must be strings or ints'):
        export.SupervisedInputReceiver(features, {1.5: labels}, tf.constant(['x']))
    with pytest.raises(ValueError, match='label must be a Tensor or SparseTensor'):
        export.SupervisedInputReceiver(features, 100, tf.constant(['x']))
    with pytest.raises(ValueError, match='labels must be defined'):
        export.SupervisedInputReceiver(features, None, tf.constant(['x']))


def test_raw_serving_placeholders_keep_an_unknown_rank_and_the_features_op_names():
    receiver_fn = export.build_raw_serving_input_receiver_fn(
        {'a': tf.placeholder(tf.float32, name='pixels'), 'b': tf.constant([[1, 2]])}, 8)
    with tf.Graph().as_default():
        receiver = receiver_fn()
    assert receiver.receiver_tensors['a'].shape.rank is None
    assert receiver.receiver_tensors['a'].op.name == 'pixels'
    assert receiver.receiver_tensors['b'].shape.as_list() == [8, 2]


def test_raw_supervised_receiver_feeds_features_and_labels_by_their_keys():
    features = {'f1': tf.constant(['hello']), 'f2': tf.constant([42])}
    receiver_fn = export.build_raw_supervised_input_receiver_fn(features, {'y': tf.constant([5])},
                                                                default_batch_size=10)
    with tf.Graph().as_default():
        receiver = receiver_fn()
    assert set(receiver.receiver_tensors) == {'f1', 'f2', 'y'}
    assert receiver.features['f1'].shape.as_list() == [10]
    assert receiver.labels['y'].dtype == tf.int32


def test_raw_supervised_receiver_feeds_lone_tensors_as_input_and_label():
    receiver_fn = export.build_raw_supervised_input_receiver_fn(tf.constant([1.0]),
                                                                tf.constant([5]))
    with tf.Graph().as_default():
        receiver = receiver_fn()
    assert set(receiver.receiver_tensors) == {'input', 'label'}
    assert receiver.receiver_tensors['label'] is receiver.labels


def test_raw_supervised_receiver_refuses_keys_shared_by_features_and_labels():
    with pytest.raises(ValueError, match='distinct keys'):
        export.build_raw_supervised_input_receiver_fn({'x': tf.constant([1])},
                                                      {'x': tf.constant([2])})
    with pytest.raises(ValueError, match='distinct keys'):
        export.build_raw_supervised_input_receiver_fn(tf.constant([1]),
                                                      {'input': tf.constant([2])})


def test_supervised_receiver_from_input_fn_passes_its_arguments_and_keeps_its_ops_apart(graph):
    def input_fn(key='x'):
        return {key: tf.constant([[1], [2]], name='input_fn_op')}, tf.constant([[0], [1]])

    receiver_fn = export.build_supervised_input_receiver_fn_from_input_fn(input_fn, key='z')
    receiver = receiver_fn()
    assert set(receiver.receiver_tensors) == {'z', 'label'}
    assert receiver.features['z'].shape.as_list() == [None, 1]
    assert {op.type for op in graph.get_operations()} == {'Placeholder'}


def test_supervised_receiver_from_a_dataset_input_fn():
    def input_fn():
        return tf.data.Dataset.from_tensors(({'x': tf.constant([1.0])}, tf.constant([1])))

    receiver = export.build_supervised_input_receiver_fn_from_input_fn(input_fn)()
    assert set(receiver.receiver_tensors) == {'x', 'label'}


def test_tensorflows_saved_model_helpers_are_at_tf115s_names(tmp_path):
    assert export.EXPORT_TAG_MAP[ModeKeys.TRAIN] == [tf.saved_model.tag_constants.TRAINING]
    assert export.SIGNATURE_KEY_MAP[ModeKeys.EVAL] == 'eval'
    folder = export.get_timestamped_export_dir(str(tmp_path)).decode()
    assert len(os.path.basename(folder)) == 10
    assert b'temp-' in export.get_temp_export_dir(folder.encode())
    outputs = export.export_outputs_for_mode(ModeKeys.EVAL, loss=tf.constant(1.0))
    assert isinstance(outputs['eval'], export.EvalOutput)
    assert (export.SINGLE_FEATURE_DEFAULT_NAME, export.SINGLE_LABEL_DEFAULT_NAME,
            export.SINGLE_RECEIVER_DEFAULT_NAME) == ('feature', 'label', 'input')


def test_an_eval_export_gives_the_model_fn_the_supervised_receivers_labels():
    given = {}

    def call_model_fn(features, labels, mode):
        given['labels'] = labels
        loss = tf.reduce_mean(tf.cast(features['x'], tf.float32) - tf.cast(labels, tf.float32))
        return EstimatorSpec(mode, loss=loss, predictions={'y': loss})

    receiver_fn = export.build_raw_supervised_input_receiver_fn({'x': tf.constant([1.0])},
                                                                tf.constant([1]))
    serving = export.serving(call_model_fn, receiver_fn, ModeKeys.EVAL, 'a model')
    with tf.Graph().as_default():
        serving.build()
        assert given['labels'].op.type == 'Placeholder'
        assert list(serving.signature_defs()) == ['eval']


@pytest.mark.parametrize('exporter', [LatestExporter, BestExporter])
def test_exporters_refuse_keeping_no_exports(exporter):
    with pytest.raises(ValueError, match='positive number'):
        exporter('e', lambda: None, exports_to_keep=0)


def test_best_exporter_refuses_no_compare_fn():
    with pytest.raises(ValueError, match='`compare_fn` must not be None'):
        BestExporter('best', lambda: None, compare_fn=None)


class _FakeEstimator:
    """Writes an empty timestamped folder per export, as `export_saved_model` names them."""

    def __init__(self, model_dir):
        self.model_dir = model_dir
        self.exports = 0

    def export_saved_model(self, export_path, receiver_fn, **unused):
        self.exports += 1
        folder = os.path.join(export_path, '%010d' % self.exports)
        os.makedirs(folder)
        return folder.encode()


def test_latest_exporter_removes_only_timestamped_exports(tmp_path):
    os.makedirs(tmp_path / '123')
    estimator = _FakeEstimator(str(tmp_path))
    exporter = LatestExporter('latest', lambda: None, exports_to_keep=1)
    for _ in range(3):
        exporter.export(estimator, str(tmp_path), None, {'loss': 1.0}, False)
    assert sorted(os.listdir(tmp_path)) == ['0000000003', '123']


def test_best_exporter_reads_the_best_again_for_another_model_dir(tmp_path):
    for name, loss in (('a', 1.0), ('b', 5.0)):
        writer = tf.summary.FileWriter(str(tmp_path / name / 'eval'))
        writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag='loss',
                                                              simple_value=loss)]), 1)
        writer.close()
    exporter = BestExporter('best', lambda: None)
    export_path = str(tmp_path / 'export')
    assert exporter.export(_FakeEstimator(str(tmp_path / 'a')), export_path, None,
                           {'loss': 2.0}, False) is None
    assert exporter.export(_FakeEstimator(str(tmp_path / 'b')), export_path, None,
                           {'loss': 2.0}, False) is not None


def test_tf2s_best_exporter_writes_its_first_export_where_tf115s_skipped_it(tmp_path):
    """The evaluation writes its result before exporting: the event files hold one as good.
    TF 1.15 exported nothing then; TF 2.2-2.15 (`--tf2`) always exported the first."""
    writer = tf.summary.FileWriter(str(tmp_path / 'eval'))
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag='loss', simple_value=2.0)]), 1)
    writer.close()
    estimator = _FakeEstimator(str(tmp_path))
    assert BestExporter('best', lambda: None).export(
        estimator, str(tmp_path / 'tf1'), None, {'loss': 2.0}, False) is None
    assert BestExporterV2('best', lambda: None).export(
        estimator, str(tmp_path / 'tf2'), None, {'loss': 2.0}, False) is not None


def test_best_exporter_compare_fn_takes_tf115s_two_arguments_by_name():
    def receiver():
        return None

    with pytest.raises(ValueError, match='must include best_eval_result argument'):
        BestExporter('best', receiver, compare_fn=lambda best, current: True)
    with pytest.raises(ValueError, match='and no other'):
        BestExporter('best', receiver,
                     compare_fn=lambda best_eval_result, current_eval_result, extra: True)
    BestExporter('best', receiver,
                 compare_fn=lambda best_eval_result, current_eval_result: True)
