"""`tf.contrib.tpu` as programs running `TPUEstimator(use_tpu=False)` on CPUs and GPUs used it
(BERT's `run_classifier.py`, `run_pretraining.py`, `run_squad.py` and their multi-GPU forks):
`TPUEstimator`, `TPUEstimatorSpec`, `RunConfig`, `TPUConfig`, `InputPipelineConfig`,
`CrossShardOptimizer`, `bfloat16_scope`; and `tf.contrib.cluster_resolver.TPUClusterResolver`,
which stops with one line (there is no TPU here).

    estimator = tf.contrib.tpu.TPUEstimator(
        use_tpu=False, model_fn=model_fn, config=tf.contrib.tpu.RunConfig(...),
        train_batch_size=32, eval_batch_size=8, predict_batch_size=8)

`TPUEstimator` is `tf.estimator.Estimator` (this project's, over the towers training loop) with
TF 1.15's CPU path of it: `params['batch_size']` is the mode's batch size (train_batch_size in
TRAIN, eval_batch_size in EVAL, predict_batch_size in PREDICT; not set while exporting, nor when
that size is None), for the `input_fn` and the `model_fn`, and `params['use_tpu']` is False for
the `model_fn`; a `TPUEstimatorSpec` becomes an `EstimatorSpec` (`tpu_spec`); training logs
`global_step/sec` and `examples/sec` instead of the loss every
ceil(log_step_count_steps / iterations_per_loop) steps.
"""
import inspect
import math

from towers.compat import tf
from towers.legacy.estimator import calls
from towers.legacy.estimator.estimator import Estimator
from towers.legacy.estimator.spec import EstimatorError, EstimatorSpec, ModeKeys
from towers.legacy.contrib.tpu_config import (InputPipelineConfig, RunConfig, TPUConfig,
                                              parse_iterations_per_loop)
from towers.legacy.contrib.tpu_spec import TPUEstimatorSpec
from towers.legacy.contrib.wrapping import WrappingOptimizer
from towers.legacy.modules import LegacyError

BATCH_SIZE_KEY = 'batch_size'
USE_TPU_KEY = 'use_tpu'
RESERVED_PARAMS_KEYS = (BATCH_SIZE_KEY, 'context')
NO_TPU = 'no TPU is provided here (towers-legacy runs on CPUs and GPUs)'

bfloat16_scope = tf.tpu.bfloat16_scope


def _name(fn):
    return getattr(fn, '__name__', None) or type(fn).__name__


def _with_item(params, key, value):
    """`params` (a dict or `HParams`, changed in place) with `key` set to `value`."""
    if hasattr(params, 'set_hparam'):
        if key in params:
            params.set_hparam(key, value)
        else:
            params.add_hparam(key, value)
    else:
        params[key] = value
    return params


class TPUEstimator(Estimator):
    """TF 1.15's `tf.contrib.tpu.TPUEstimator`, with `use_tpu=False` (see the module).

    Args (TF 1.15's):
      model_fn: as `Estimator`'s, returning a `TPUEstimatorSpec` or an `EstimatorSpec`; it
        must take `params` (the batch size comes in them).
      model_dir, params, warm_start_from: as `Estimator`'s; `params` may not hold
        'batch_size' or 'context'.
      config: a `tf.contrib.tpu.RunConfig`.
      use_tpu: must be False here.
      train_batch_size, eval_batch_size, predict_batch_size: the global batch size of each
        mode, given as params['batch_size'] (not set when None).
      batch_axis, eval_on_tpu, export_to_tpu: TPU settings, without effect off a TPU
        (`export_saved_model` writes the CPU graph, with the tag 'serve', only).
      export_to_cpu: must be True here (the CPU graph is the one exported).
      embedding_config_spec: must be None (TPU embeddings need a TPU).

    Raises:
      EstimatorError: any of the above not so; as `Estimator`'s.
    """

    def __init__(self, model_fn=None, model_dir=None, config=None, params=None, use_tpu=True,
                 train_batch_size=None, eval_batch_size=None, predict_batch_size=None,
                 batch_axis=None, eval_on_tpu=True, export_to_tpu=True, export_to_cpu=True,
                 warm_start_from=None, embedding_config_spec=None,
                 export_saved_model_api_version=None):
        if not isinstance(config, RunConfig):
            raise EstimatorError('TPUEstimator config must be a tf.contrib.tpu.RunConfig, got %s'
                                 % type(config).__name__)
        if params is not None and any(key in params for key in RESERVED_PARAMS_KEYS):
            raise EstimatorError('TPUEstimator params may not hold %s: TPUEstimator sets them '
                                 "(params['batch_size'] is train_batch_size, eval_batch_size "
                                 'or predict_batch_size); params are %r'
                                 % (' or '.join(RESERVED_PARAMS_KEYS), params))
        if use_tpu:
            raise EstimatorError('TPUEstimator(use_tpu=%r): %s; pass use_tpu=False, as TF 1.x '
                                 'programs did to run TPUEstimator on them' % (use_tpu, NO_TPU))
        if embedding_config_spec is not None:
            raise EstimatorError('TPUEstimator embedding_config_spec: TPU embeddings need a '
                                 'TPU, and %s' % NO_TPU)
        if not export_to_cpu:
            raise EstimatorError('TPUEstimator(export_to_cpu=False) would export the TPU graph '
                                 'only, and %s' % NO_TPU)
        for name, size in (('train_batch_size', train_batch_size),
                           ('eval_batch_size', eval_batch_size),
                           ('predict_batch_size', predict_batch_size)):
            if size is not None and (not isinstance(size, int) or size <= 0):
                raise EstimatorError('TPUEstimator %s must be a positive integer, got %r'
                                     % (name, size))
        if model_fn is not None and 'params' not in calls.arg_names(model_fn)[0]:
            raise EstimatorError("the model_fn %s() takes no params: TPUEstimator passes the "
                                 "batch size to it as params['batch_size']" % _name(model_fn))
        self._batch_sizes = {ModeKeys.TRAIN: train_batch_size, ModeKeys.EVAL: eval_batch_size,
                             ModeKeys.PREDICT: predict_batch_size}
        self._exporting = False
        self._log_every = _log_every(config)
        super().__init__(_returning_estimator_spec(model_fn), model_dir,
                         config.replace(log_step_count_steps=None), params or {},
                         warm_start_from)

    def _params_for(self, mode, params):
        """`params` with the batch size of `mode` (unless exporting or None)."""
        if not self._exporting and self._batch_sizes[mode] is not None:
            _with_item(params, BATCH_SIZE_KEY, self._batch_sizes[mode])
        return params

    def _call_model_fn(self, features, labels, mode):
        params = _with_item(self._params_for(mode, self.params), USE_TPU_KEY, False)
        tf.logging.info('Running %s on CPU', mode)
        spec = calls.call_model_fn(self._model_fn, features, labels, mode, params, self.config)
        if mode == ModeKeys.TRAIN and self._log_every is not None:
            writer = (tf.summary.FileWriterCache.get(self.model_dir)
                      if self._config.save_summary_steps else None)
            every_n_steps, every_n_secs = self._log_every
            spec = spec._replace(training_hooks=spec.training_hooks + (calls.StepRateHook(
                tf.train.get_global_step(), every_n_steps, writer, self._batch_sizes[mode],
                every_n_secs),))
        return spec

    def _with_batch_size(self, input_fn):
        """`input_fn` as an `input_fn` (mode, params, config) that gets the mode's batch size
        in `params`.

        Raises:
          EstimatorError: `input_fn` takes no `params` (TF 1.x required them).
        """
        names, _ = calls.arg_names(input_fn)
        if 'params' not in names:
            raise EstimatorError("the input_fn %s() takes no params: TPUEstimator passes the "
                                 "batch size to it as params['batch_size']" % _name(input_fn))

        def input_fn_with_batch_size(mode, params, config):
            given = {'mode': mode, 'params': self._params_for(mode, params), 'config': config}
            return input_fn(**{name: given[name] for name in names if name in given})

        input_fn_with_batch_size.__name__ = _name(input_fn)
        return input_fn_with_batch_size

    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        return super().train(self._with_batch_size(input_fn), hooks, steps, max_steps,
                             saving_listeners)

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        return super().evaluate(self._with_batch_size(input_fn), steps, hooks, checkpoint_path,
                                name)

    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        return super().predict(self._with_batch_size(input_fn), predict_keys, hooks,
                               checkpoint_path, yield_single_examples)

    def export_saved_model(self, export_dir_base, serving_input_receiver_fn,
                           assets_extra=None, as_text=False, checkpoint_path=None,
                           experimental_mode=ModeKeys.PREDICT):
        """`Estimator.export_saved_model` of the CPU graph: the `model_fn` gets no
        params['batch_size'] and params['use_tpu'] False, as TF 1.15's export for CPU gave."""
        self._exporting = True
        try:
            return super().export_saved_model(export_dir_base, serving_input_receiver_fn,
                                              assets_extra, as_text, checkpoint_path,
                                              experimental_mode)
        finally:
            self._exporting = False


def _log_every(config):
    """(every_n_steps, every_n_secs) of TPUEstimator's step-rate lines from `config`'s
    `log_step_count_steps` and `tpu_config.iterations_per_loop`; None when not logged."""
    iterations = parse_iterations_per_loop(config.tpu_config.iterations_per_loop)
    if iterations.unit == 'seconds':
        return None, iterations.value
    if config.log_step_count_steps is None:
        return None
    return int(math.ceil(config.log_step_count_steps / iterations.value)), None


def _returning_estimator_spec(model_fn):
    """`model_fn` (same arguments, same name) returning an `EstimatorSpec`: a
    `TPUEstimatorSpec` it returns becomes one (`as_estimator_spec`)."""
    if model_fn is None:
        return None

    def model_fn_returning_estimator_spec(**kwargs):
        spec = model_fn(**kwargs)
        if isinstance(spec, TPUEstimatorSpec):
            return spec.as_estimator_spec()
        if not isinstance(spec, EstimatorSpec):
            raise EstimatorError('the model_fn %s() returned %s: expected a '
                                 'tf.contrib.tpu.TPUEstimatorSpec or tf.estimator.EstimatorSpec'
                                 % (_name(model_fn), type(spec).__name__))
        return spec

    model_fn_returning_estimator_spec.__name__ = _name(model_fn)
    # The Estimator reads which arguments to give from the signature: the model_fn's.
    model_fn_returning_estimator_spec.__signature__ = inspect.signature(model_fn)
    return model_fn_returning_estimator_spec


class CrossShardOptimizer(WrappingOptimizer):
    """TF 1.15's `tf.contrib.tpu.CrossShardOptimizer` off a TPU: one shard, so the wrapped
    optimizer's gradients and updates unchanged (the mean over one shard is its value).

    Raises:
      EstimatorError: `reduction` is not `tf.losses.Reduction.MEAN` or `SUM`.
    """

    def __init__(self, opt, reduction=tf.losses.Reduction.MEAN, name='CrossShardOptimizer',
                 group_assignment=None):
        if reduction not in (tf.losses.Reduction.MEAN, tf.losses.Reduction.SUM):
            raise EstimatorError('CrossShardOptimizer reduction must be tf.losses.Reduction.MEAN '
                                 'or SUM, got %r' % (reduction,))
        super().__init__(opt, name)
        self._reduction = reduction
        self._group_assignment = group_assignment


class TPUClusterResolver:
    """`tf.contrib.cluster_resolver.TPUClusterResolver`: there is no TPU to resolve here, so
    making one stops the program with one line (BERT makes it only with --use_tpu and
    --tpu_name).

    Raises:
      LegacyError: always.
    """

    def __init__(self, tpu=None, zone=None, project=None, job_name='worker',
                 coordinator_name=None, coordinator_address=None, credentials='default',
                 service=None, discovery_url=None):
        raise LegacyError('tf.contrib.cluster_resolver.TPUClusterResolver(%r): %s; run without '
                          'a TPU name, and TPUEstimator with use_tpu=False' % (tpu, NO_TPU))


__all__ = ['CrossShardOptimizer', 'InputPipelineConfig', 'RunConfig',
           'TPUClusterResolver', 'TPUConfig', 'TPUEstimator', 'TPUEstimatorSpec',
           'bfloat16_scope']
