"""`scipy.misc.imread`, `imresize` and `imsave` for the legacy runner, through Pillow.

SciPy removed them (1.2-1.3); SegDecNet-era code still reads, resizes and writes its images
with them. These follow SciPy 1.1's behaviour on the images such code handled: 2-D grey
images and [H, W, 3|4] colour images, channels last. As SciPy did, an array that is not uint8
is scaled linearly from its minimum..maximum onto 0..255 before it becomes an image (unless
`mode='F'`, a 2-D float image), so `imresize` returns uint8 for any input.
"""
import importlib.machinery
import types

import numpy as np
from PIL import Image

from towers.legacy.modules import LegacyError, ProxyModule

NAMES = ('imread', 'imresize', 'imsave')

_RESAMPLE = {'nearest': Image.Resampling.NEAREST, 'lanczos': Image.Resampling.LANCZOS,
             'bilinear': Image.Resampling.BILINEAR, 'bicubic': Image.Resampling.BICUBIC,
             'cubic': Image.Resampling.BICUBIC}


def bytescale(data):
    """`data` as uint8: unchanged when uint8, else min..max mapped linearly onto 0..255 and
    rounded, as `scipy.misc.bytescale` with its defaults."""
    data = np.asarray(data)
    if data.dtype == np.uint8:
        return data
    low, high = data.min(), data.max()
    scale = 255.0 / ((high - low) or 1)
    return (np.clip((data - low) * scale, 0, 255) + 0.5).astype(np.uint8)


def to_image(array, mode=None):
    """A Pillow image of `array` as `scipy.misc.toimage` made it.

    Args:
      array: [H, W], [H, W, 3] or [H, W, 4].
      mode: None (grey, RGB or RGBA by shape), 'F' (a 2-D float image, not rescaled), or any
        other Pillow mode to convert the rescaled image to.

    Raises:
      LegacyError: for another shape.
    """
    array = np.asarray(array)
    if not (array.ndim == 2 or (array.ndim == 3 and array.shape[2] in (3, 4))):
        raise LegacyError('scipy.misc (towers-legacy): expected an image array [H, W], '
                          '[H, W, 3] or [H, W, 4], got shape %s' % (list(array.shape),))
    if mode == 'F' and array.ndim == 2:
        return Image.fromarray(array.astype(np.float32))  # float32 [H, W] is mode 'F'
    image = Image.fromarray(bytescale(array))
    return image if mode is None else image.convert(mode)


def imread(name, flatten=False, mode=None):
    """Reads an image file into an array: [H, W] grey, [H, W, 3|4] colour (palette images as
    RGB, or RGBA with transparency); `mode` converts first (a Pillow mode); `flatten` gives
    float32 grey."""
    with Image.open(name) as image:
        if mode is not None:
            image = image.convert(mode)
        elif image.mode == 'P':
            image = image.convert('RGBA' if 'transparency' in image.info else 'RGB')
        if flatten:
            image = image.convert('F')
        return np.array(image)


def imresize(arr, size, interp='bilinear', mode=None):
    """Resizes an image array.

    Args:
      arr: [H, W] or [H, W, 3|4].
      size: an int percentage, a float fraction, or the output (height, width).
      interp: 'nearest', 'lanczos', 'bilinear', 'bicubic' or 'cubic'.
      mode: as `to_image`.

    Returns:
      The resized array: uint8 (float32 with mode 'F').
    """
    if interp not in _RESAMPLE:
        raise LegacyError('scipy.misc.imresize: interp %r is not one of %s'
                          % (interp, ', '.join(sorted(_RESAMPLE))))
    image = to_image(arr, mode)
    if isinstance(size, (int, np.integer)):
        size = tuple(int(side * size / 100.0) for side in image.size)
    elif isinstance(size, (float, np.floating)):
        size = tuple(int(side * size) for side in image.size)
    else:
        size = (int(size[1]), int(size[0]))
    return np.array(image.resize(size, resample=_RESAMPLE[interp]))


def imsave(name, arr, format=None):
    """Writes an image array ([H, W] or [H, W, 3|4], rescaled as `bytescale` unless uint8) to
    `name`, in `format` or the one its extension names."""
    to_image(arr).save(name, format)


def resolve(usage):
    """The finder's answers for SciPy: a function (module name) -> module or None.

    'scipy.misc' is a module of `imread`, `imresize` and `imsave` (whose use `usage`
    records); 'scipy' an empty package when SciPy is not installed, so that
    `from scipy.misc import imread` works either way.
    """
    misc = ProxyModule('scipy.misc', 'scipy.misc',
                       [{name: globals()[name] for name in NAMES}], usage, record_names=True,
                       missing=lambda attr: 'SciPy removed scipy.misc; towers-legacy provides '
                                            '%s only (through Pillow)' % ', '.join(NAMES))

    def find(fullname):
        if fullname == 'scipy.misc':
            return misc
        if fullname == 'scipy' and importlib.machinery.PathFinder.find_spec('scipy') is None:
            package = types.ModuleType('scipy')
            package.__path__ = []
            return package
        return None
    return find
