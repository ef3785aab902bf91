"""The value types of the scripts' flags: each reads one flag's text, or raises
`argparse.ArgumentTypeError` saying what was expected (`towers.flags.FlagParser` reports it
as one `error:` line naming the flag). `towers.flags` offers them under the same names."""
import argparse
import os
import re

# absl's spellings of a boolean value, plus yes/no.
_TRUE = ('true', 't', '1', 'yes')
_FALSE = ('false', 'f', '0', 'no')
_HOST_PORT = re.compile(r'^[^\s:,]+:[0-9]{1,5}$')


def _int_at_least(text, minimum):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError('expected a whole number, got %r' % text)
    if value < minimum:
        raise argparse.ArgumentTypeError('expected a number >= %d, got %d' % (minimum, value))
    return value


def positive_int(text):
    """Flag type: an integer >= 1."""
    return _int_at_least(text, 1)


def non_negative_int(text):
    """Flag type: an integer >= 0."""
    return _int_at_least(text, 0)


def positive_int_list(text):
    """Flag type: comma-separated integers >= 1, e.g. '1,2,4', in the order given."""
    values = [_int_at_least(item.strip(), 1) for item in text.split(',') if item.strip()]
    if not values:
        raise argparse.ArgumentTypeError('expected comma-separated numbers >= 1, got %r' % text)
    return values


def _float(text):
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError('expected a number, got %r' % text)


def positive_float(text):
    """Flag type: a number > 0."""
    value = _float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError('expected a number > 0, got %s' % text)
    return value


def fraction(text):
    """Flag type: a number strictly between 0 and 1."""
    value = _float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError('expected a fraction between 0 and 1, got %s' % text)
    return value


def non_negative_float(text):
    """Flag type: a number >= 0."""
    value = _float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError('expected a number >= 0, got %s' % text)
    return value


def boolean(text):
    """Flag type: true/false as absl reads them (true, t, 1 / false, f, 0; any case), yes/no."""
    value = text.lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise argparse.ArgumentTypeError('expected true or false, got %r' % text)


def host_list(text):
    """Flag type: comma-separated host:port entries, e.g. 'ps0:2222,ps1:2222'."""
    hosts = [h.strip() for h in text.split(',') if h.strip()]
    bad = [h for h in hosts if not _HOST_PORT.match(h)]
    if bad:
        raise argparse.ArgumentTypeError('expected comma-separated host:port entries, got %s'
                                         % ', '.join(repr(h) for h in bad))
    return hosts


def _nearest_existing(path):
    """`path` itself, or its nearest ancestor that exists."""
    path = os.path.abspath(path)
    while not os.path.lexists(path):
        path = os.path.dirname(path)
    return path


def _existing_dir(text, access, what):
    if not os.path.isdir(text):
        raise argparse.ArgumentTypeError('expected a directory, but %s is a file' % text)
    if not os.access(text, access | os.X_OK):
        raise argparse.ArgumentTypeError('expected a directory it can %s, but %s is not %sable'
                                         % (what, text, what))
    return text


def _creatable_dir(text):
    parent = _nearest_existing(text)
    if not os.path.isdir(parent):
        raise argparse.ArgumentTypeError('expected a directory, but %s is a file' % parent)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError('cannot create the directory %s: %s is not writable'
                                         % (text, parent))
    return text


def output_dir(text):
    """Flag type: a directory to write to: an existing writable one, or one that can be made."""
    if os.path.exists(text):
        return _existing_dir(text, os.W_OK, 'write')
    return _creatable_dir(text)


def input_dir(text):
    """Flag type: an existing directory to read."""
    if not os.path.exists(text):
        raise argparse.ArgumentTypeError('expected an existing directory, but %s does not '
                                         'exist' % text)
    return _existing_dir(text, os.R_OK, 'read')


def data_dir(text):
    """Flag type: a directory of data to read, or one that can be made to generate data in."""
    if os.path.exists(text):
        return _existing_dir(text, os.R_OK, 'read')
    return _creatable_dir(text)


def checkpoint_prefix(text):
    """Flag type: a checkpoint prefix, e.g. '/tmp/train/model.ckpt-1000' (its `.index` exists)."""
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError('expected a checkpoint prefix such as %s, but %s is a '
                                         'directory' % (os.path.join(text, 'model.ckpt-<step>'),
                                                        text))
    if not os.path.isfile(text + '.index'):
        raise argparse.ArgumentTypeError('expected a checkpoint prefix, but there is no %s.index'
                                         % text)
    return text
