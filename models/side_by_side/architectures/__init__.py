"""The segmentation architectures by name: every module of this package is one.

    decoder = architectures.get('unet').decoder     # (output, skips, is_training) -> logits

An architecture module holds `TITLE` (how tables and charts name it) and
`decoder(output, skips, is_training)`, which builds the decoder and head on the ResNet-34
encoder's outputs (see `models.side_by_side.resnet34.encoder`) and returns the logits
[b, H, W, 1] at the input's resolution. Adding a fourth architecture is adding its module
here: it is registered under its module name.
"""
import importlib
import pkgutil

from towers.errors import TowersError


def names():
    """The registered architectures' names, sorted."""
    return sorted(module.name for module in pkgutil.iter_modules(__path__)
                  if not module.ispkg and not module.name.startswith('_'))


def get(name):
    """The module of the architecture `name`.

    Raises:
      TowersError: no architecture is called `name`; the message lists those that are.
    """
    if name not in names():
        raise TowersError('unknown segmentation model %r; registered models: %s'
                          % (name, ', '.join(names())))
    return importlib.import_module('%s.%s' % (__name__, name))


def parse_list(text, flag='--models'):
    """The architecture names in `text`, comma-separated, as a flag gives them.

    Raises:
      TowersError: naming `flag`, when a name is unknown or repeated, or none is given.
    """
    chosen = [name.strip() for name in text.split(',') if name.strip()]
    unknown = [name for name in chosen if name not in names()]
    repeated = sorted({name for name in chosen if chosen.count(name) > 1})
    if unknown or repeated or not chosen:
        raise TowersError('%s %r: expected a comma-separated list of distinct models among %s'
                          '%s' % (flag, text, ', '.join(names()),
                                  ' (unknown: %s)' % ', '.join(unknown) if unknown else ''))
    return chosen
