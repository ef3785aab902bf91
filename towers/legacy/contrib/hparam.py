"""`tf.contrib.training.HParams` (also `tensorflow.contrib.training.python.training.hparam`):
named hyperparameters whose types are fixed by their first values, as TensorFlow 1.x had them.

    hparams = HParams(learning_rate=0.1, layers=[64, 32], use_bn=True)
    hparams.parse('learning_rate=0.3,layers=[128,64],use_bn=false')
    hparams.learning_rate, hparams.values(), hparams.to_json()

A value set later (`set_hparam`, `parse`, `override_from_dict`, `parse_json`) is cast to the
hyperparameter's type where TF 1.x cast it (an int to a float, not a float to an int; nothing
to or from bool or str) and a `ValueError` otherwise; a list only for a list-valued one.
`HParams` objects copy with `copy.deepcopy` and pickle. Not provided: `hparam_def` protos
(`from_proto`, `to_proto`).
"""
import json
import numbers
import re

from towers.legacy.modules import LegacyError

# One 'name=value', 'name[index]=value' or 'name=[v1,v2]' of a `parse` string, as TF 1.x
# parsed it.
_PARAM = re.compile(r'(?P<name>[a-zA-Z][\w.]*)(\[\s*(?P<index>\d+)\s*\])?\s*=\s*'
                    r'((?P<val>[^,\[]*)|\[(?P<vals>[^\]]*)\])($|,\s*)')


def _cast(name, param_type, value):
    """`value` as `param_type`, where TF 1.x's HParams cast it; else ValueError."""
    if type(value) is param_type or param_type is type(None):
        return value
    fail = ValueError("Could not cast hparam '%s' of type '%s' from value %r"
                      % (name, param_type, value))
    if issubclass(param_type, (str, bytes)) and not isinstance(value, (str, bytes)):
        raise fail
    if issubclass(param_type, bool) != isinstance(value, bool):
        raise fail
    if issubclass(param_type, numbers.Integral) and not isinstance(value, numbers.Integral):
        raise fail
    if issubclass(param_type, numbers.Number) and not isinstance(value, numbers.Number):
        raise fail
    return param_type(value)


def _parser(name, param_type, values):
    """A function (text) -> value of `param_type` for hyperparameter `name` of the string
    `values`; 'true'/'false' (or an integer) for bool."""
    def fail(text):
        return ValueError("Could not parse hparam '%s' of type '%s' with value '%s' in %s"
                          % (name, param_type.__name__, text, values))

    def parse(text):
        if param_type is bool and text in ('true', 'True', 'false', 'False'):
            return text in ('true', 'True')
        try:
            return bool(int(text)) if param_type is bool else param_type(text)
        except ValueError:
            raise fail(text) from None
    return parse


def parse_values(values, type_map, ignore_unknown=False):
    """The assignments of the string `values` ('a=1,b=[1,2],c[0]=3') as a dict name -> value
    (a list for 'b=[...]', a dict index -> value for 'c[i]=...'), each parsed as the type
    `type_map` gives its name.

    Raises:
      ValueError: a malformed string, an unknown name (unless `ignore_unknown`), a value that
        does not parse as its type, or a name assigned twice.
    """
    results = {}
    position = 0
    while position < len(values):
        match = _PARAM.match(values, position)
        if not match:
            raise ValueError('Malformed hyperparameter value: %s' % values[position:])
        position = match.end()
        name, index, value, items = match.group('name', 'index', 'val', 'vals')
        if name not in type_map:
            if ignore_unknown:
                continue
            raise ValueError('Unknown hyperparameter type for %s' % name)
        parse = _parser(name, type_map[name], values)
        reused = ValueError("Multiple assignments to variable '%s' in %s" % (name, values))
        if items is not None:
            if index is not None:
                raise ValueError('Assignment of a list to a list index.')
            if name in results:
                raise reused
            results[name] = [parse(item) for item in re.split('[ ,]', items) if item]
        elif index is None:
            if name in results:
                raise reused
            results[name] = parse(value)
        else:
            indexed = results.setdefault(name, {})
            if not isinstance(indexed, dict) or int(index) in indexed:
                raise reused
            indexed[int(index)] = parse(value)
    return results


class HParams:
    """Hyperparameters as attributes, each with the type of its first value.

    Args:
      hparam_def: not provided (a `HParamDef` proto); must be None.
      model_structure: anything, kept for `get_model_structure`.
      **kwargs: name=value of each hyperparameter.
    """

    def __init__(self, hparam_def=None, model_structure=None, **kwargs):
        if hparam_def is not None:
            raise LegacyError('tf.contrib.training.HParams(hparam_def=...) is not available: '
                              'towers-legacy has no HParamDef protos; pass the values as '
                              'keyword arguments')
        self._hparam_types = {}
        self._model_structure = model_structure
        for name, value in kwargs.items():
            self.add_hparam(name, value)

    def add_hparam(self, name, value):
        """Adds hyperparameter `name`; its type is `value`'s (a list's: its first item's)."""
        if getattr(self, name, None) is not None:
            raise ValueError('Hyperparameter name is reserved: %s' % name)
        if isinstance(value, (list, tuple)):
            if not value:
                raise ValueError('Multi-valued hyperparameters cannot be empty: %s' % name)
            self._hparam_types[name] = (type(value[0]), True)
        else:
            self._hparam_types[name] = (type(value), False)
        setattr(self, name, value)

    def set_hparam(self, name, value):
        """Sets `name` to `value` cast to its type (a list for a list-valued one).

        Raises:
          KeyError: no such hyperparameter.
          ValueError: a value of the wrong type, or a list for a single value or vice versa.
        """
        param_type, is_list = self._hparam_types[name]
        if isinstance(value, list):
            if not is_list:
                raise ValueError('Must not pass a list for single-valued parameter: %s' % name)
            setattr(self, name, [_cast(name, param_type, item) for item in value])
        elif is_list:
            raise ValueError('Must pass a list for multi-valued parameter: %s.' % name)
        else:
            setattr(self, name, _cast(name, param_type, value))

    def del_hparam(self, name):
        """Removes hyperparameter `name`, if there is one."""
        if hasattr(self, name):
            delattr(self, name)
            del self._hparam_types[name]

    def parse(self, values):
        """Sets the hyperparameters the string `values` assigns ('a=1,b=[1,2]'); returns self."""
        types = {name: param_type for name, (param_type, _) in self._hparam_types.items()}
        return self.override_from_dict(parse_values(values, types))

    def override_from_dict(self, values_dict):
        """Sets each name of `values_dict` to its value (`set_hparam`); returns self."""
        for name, value in values_dict.items():
            self.set_hparam(name, value)
        return self

    def parse_json(self, values_json):
        """Sets the hyperparameters of the JSON object `values_json`; returns self."""
        return self.override_from_dict(json.loads(values_json))

    def set_model_structure(self, model_structure):
        """Keeps `model_structure`."""
        self._model_structure = model_structure

    def get_model_structure(self):
        """The `model_structure` given."""
        return self._model_structure

    def values(self):
        """A dict name -> value of every hyperparameter."""
        return {name: getattr(self, name) for name in self._hparam_types}

    def to_json(self, indent=None, separators=None, sort_keys=False):
        """`values()` as JSON, callable values left out."""
        def without_callables(value):
            if isinstance(value, dict):
                return {key: without_callables(item) for key, item in value.items()
                        if not callable(item)}
            if isinstance(value, list):
                return [without_callables(item) for item in value if not callable(item)]
            return value
        return json.dumps(without_callables(self.values()), indent=indent,
                          separators=separators, sort_keys=sort_keys)

    def get(self, key, default=None):
        """The value of `key`, or `default` when there is no such hyperparameter; a default
        of another type than `key`'s is a ValueError."""
        if key not in self._hparam_types:
            return default
        if default is not None:
            param_type, is_list = self._hparam_types[key]
            kind = '%s%s' % ('list of ' if is_list else '', param_type.__name__)
            fail = ValueError('Hparam \'%s\' of type %s is incompatible with default=%r'
                              % (key, kind, default))
            if is_list != isinstance(default, list):
                raise fail
            for item in default if is_list else [default]:
                try:
                    _cast(key, param_type, item)
                except ValueError:
                    raise fail from None
        return getattr(self, key)

    def __contains__(self, key):
        return key in self._hparam_types

    def __str__(self):
        return ','.join('%s=%s' % item for item in self.values().items())

    def __repr__(self):
        return '%s(%s)' % (type(self).__name__, sorted(self.values().items()))
