"""The measure of `tf.estimator` under the runner: tensorflow/estimator's own test files at tag
v1.15.1 (the `tensorflow-estimator` TF 1.15.5 installs), which `scripts/estimator_tests.py`
runs on TF 1.15 and under the runner (`suite`).

`FILES` are the test files whose tests check public behaviour; `LEFT_OUT` names each test that
TF 1.15 passes but that is not counted, with why (it tests a private internal of the
implementation, not what a program could see).
"""
FILES = (
    'run_config_test', 'estimator_test', 'model_fn_test', 'training_test', 'exporter_test',
    'export/export_test', 'inputs/numpy_io_test', 'hooks/hooks_test',
    'canned/v1/baseline_test_v1', 'canned/v1/linear_test_v1', 'canned/v1/dnn_test_fc_v2_v1')
PACKAGE = 'tensorflow_estimator/python/estimator'

LEFT_OUT = {
}


def path_of(name):
    """The path of test file `name` in a checkout."""
    return '%s/%s.py' % (PACKAGE, name)
