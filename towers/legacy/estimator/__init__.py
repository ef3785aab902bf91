"""TF 1.15's `tf.estimator`, for programs under the legacy runner (TensorFlow 2.16 removed it).

A thin face over this project's machinery, never a second training loop: `Estimator.train`
runs `towers.training.loop.train` (checkpoints, summaries, resuming from the newest checkpoint
that reads whole, SIGTERM and Ctrl-C, the divergence guard, `--deterministic` and `--seed`);
`evaluate` and `predict` restore through `towers.evaluation.Restored`; `export_saved_model`
writes through `towers.export.save`. The modules:

- `spec`: `EstimatorSpec`, `ModeKeys` and `EstimatorError` (one `error:` line under the runner);
- `run_config`: `RunConfig` (TF 1.15's arguments and defaults, `TF_CONFIG`'s cluster and task);
- `calls`: calling `input_fn` and `model_fn`, and the hooks an Estimator adds to training;
- `estimator`: `Estimator`;
- `running`: the sessions of evaluation and prediction, and what they write;
- `training`: `TrainSpec`, `EvalSpec`, `train_and_evaluate`; `exporter`: the exporters;
- `hooks`: `tf.estimator.experimental`'s `InMemoryEvaluatorHook` and
  `make_stop_at_checkpoint_step_hook`;
- `export`: `tf.estimator.export` (receivers, export outputs); `exporting`: the SavedModels an
  Estimator writes (one mode, or all of them); `warm_start`: `WarmStartSettings`;
- `canned` and `inputs`: the canned estimators over `tf.feature_column`, `numpy_input_fn`;
- `namespace`: the module objects a script imports (`tf.estimator`, `tensorflow_estimator`,
  `tensorflow.python.estimator.*`), with TF 1.15's names at each path (`tf115_names`).

It imports as a library too, without the runner: `from towers.legacy.estimator import
Estimator, EstimatorSpec, ModeKeys, RunConfig`.
"""
from towers.legacy.estimator.estimator import Estimator
from towers.legacy.estimator.run_config import RunConfig
from towers.legacy.estimator.spec import EstimatorError, EstimatorSpec, ModeKeys
from towers.legacy.estimator.training import EvalSpec, TrainSpec, train_and_evaluate

__all__ = ['Estimator', 'EstimatorError', 'EstimatorSpec', 'EvalSpec', 'ModeKeys', 'RunConfig',
           'TrainSpec', 'train_and_evaluate']
