"""Projective transforms of images, as TF 1.15's `tf.contrib.image` made them
(`tensorflow.contrib.image.python.ops.image_ops`), on TensorFlow's `ImageProjectiveTransformV2`
kernel and its gradient: NEAREST or BILINEAR interpolation, zeros outside the input.

A transform is 8 numbers `[a0, a1, a2, b0, b1, b2, c0, c1]`: it maps the output point `(x, y)`
to the input point `((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k)`, `k = c0 x + c1 y + 1`;
it is the first 8 entries, row by row, of a 3x3 matrix whose last entry is 1. `[N, 8]` holds
one transform per image (or one for all).
"""
from towers.compat import tf

_IMAGE_DTYPES = (tf.uint8, tf.int32, tf.int64, tf.float16, tf.float32, tf.float64)


def _batched(images):
    """`images` as `[N, H, W, C]`, and a function that gives a result its input's rank back.

    Raises:
      TypeError: a dtype the kernel lacks, or a rank unknown or outside 2..4.
    """
    if images.dtype.base_dtype not in _IMAGE_DTYPES:
        raise TypeError('Invalid dtype %s of images: expected one of %s'
                        % (images.dtype, ', '.join(dtype.name for dtype in _IMAGE_DTYPES)))
    rank = images.shape.ndims
    if rank is None:
        raise TypeError('The rank of images %s must be statically known' % images.name)
    if rank == 2:
        return images[None, :, :, None], lambda output: output[0, :, :, 0]
    if rank == 3:
        return images[None], lambda output: output[0]
    if rank == 4:
        return images, lambda output: output
    raise TypeError('Images should have rank between 2 and 4, got %s' % images.shape)


def transform(images, transforms, interpolation='NEAREST', output_shape=None, name=None):
    """`images` transformed by `transforms` (see the module's docstring).

    Args:
      images: `[N, H, W, C]`, `[H, W, C]` or `[H, W]`, of uint8, int32, int64 or a float.
      transforms: `[8]` or `[N, 8]` float32 (one transform for all images, or one each).
      interpolation: 'NEAREST' or 'BILINEAR' (either case).
      output_shape: the output's `[height, width]`, default the input's.
      name: the name scope.

    Returns:
      The transformed images, of `images`' rank and dtype, `output_shape` in H and W.

    Raises:
      TypeError: a bad dtype or rank of `images`, a rank of `transforms` other than 1 or 2.
      ValueError: `output_shape` is not two numbers.
    """
    with tf.name_scope(name, 'transform'):
        images = tf.convert_to_tensor(images, name='images')
        transforms = tf.convert_to_tensor(transforms, name='transforms', dtype=tf.float32)
        batch, restore = _batched(images)
        if output_shape is None:
            output_shape = tf.shape(batch)[1:3]
            static = tf.get_static_value(output_shape)
            if static is not None:
                output_shape = static
        output_shape = tf.convert_to_tensor(output_shape, tf.int32, name='output_shape')
        if not output_shape.shape.is_compatible_with([2]):
            raise ValueError('output_shape must be a 1-D tensor of 2 elements, new_height and '
                             'new_width; got %s' % output_shape.shape)
        if transforms.shape.ndims == 1:
            transforms = transforms[None]
        elif transforms.shape.ndims != 2:
            raise TypeError('Transforms should have rank 1 or 2, got %s' % transforms.shape)
        output = tf.raw_ops.ImageProjectiveTransformV2(
            images=batch, transforms=transforms, output_shape=output_shape,
            interpolation=interpolation.upper())
        return restore(output)


def rotate(images, angles, interpolation='NEAREST', name=None):
    """`images` rotated counterclockwise by `angles` (radians) about their centers.

    Args:
      images: as for `transform`.
      angles: a scalar (all images) or `[N]` (one per image).
      interpolation: 'NEAREST' or 'BILINEAR'.
      name: the name scope.

    Returns:
      The rotated images, of `images`' shape and dtype.
    """
    with tf.name_scope(name, 'rotate'):
        images = tf.convert_to_tensor(images)
        batch, restore = _batched(images)
        size = tf.cast(tf.shape(batch)[1:3], tf.float32)
        rotations = angles_to_projective_transforms(angles, size[0:1], size[1:2])
        return restore(transform(batch, rotations, interpolation=interpolation))


def translate(images, translations, interpolation='NEAREST', name=None):
    """`images` moved by `translations`, `[dx, dy]` or `[N, 2]` pixels (right and down), as
    `transform` takes them."""
    with tf.name_scope(name, 'translate'):
        return transform(images, translations_to_projective_transforms(translations),
                         interpolation=interpolation)


def angles_to_projective_transforms(angles, image_height, image_width, name=None):
    """The transforms that rotate images of this size counterclockwise by `angles` about
    their centers.

    Args:
      angles: a scalar or `[N]`, radians.
      image_height: the height, a scalar or `[1]` (or `[N]`) float32.
      image_width: the width, likewise.
      name: the name scope.

    Returns:
      `[N, 8]` float32 transforms (N is 1 for a scalar angle).

    Raises:
      TypeError: `angles` of rank 2 or more.
    """
    with tf.name_scope(name, 'angles_to_projective_transforms'):
        angles = tf.convert_to_tensor(angles, name='angles', dtype=tf.float32)
        if angles.shape.ndims == 0:
            angles = angles[None]
        elif angles.shape.ndims != 1:
            raise TypeError('Angles should have rank 0 or 1, got %s' % angles.shape)
        cos, sin = tf.cos(angles), tf.sin(angles)
        # The translation that keeps the center ((w - 1) / 2, (h - 1) / 2) in place.
        x_offset = ((image_width - 1) - (cos * (image_width - 1)
                                         - sin * (image_height - 1))) / 2.0
        y_offset = ((image_height - 1) - (sin * (image_width - 1)
                                          + cos * (image_height - 1))) / 2.0
        zeros = tf.zeros_like(angles)
        return tf.stack([cos, -sin, x_offset, sin, cos, y_offset, zeros, zeros], axis=1)


def translations_to_projective_transforms(translations, name=None):
    """The transforms that move images by `translations`: `[dx, dy]` or `[N, 2]` float32
    -> `[N, 8]`.

    Raises:
      TypeError: `translations` of unknown rank, or rank other than 1 or 2.
    """
    with tf.name_scope(name, 'translations_to_projective_transforms'):
        translations = tf.convert_to_tensor(translations, name='translations',
                                            dtype=tf.float32)
        if translations.shape.ndims is None:
            raise TypeError('The rank of translations must be statically known')
        if translations.shape.ndims == 1:
            translations = translations[None]
        elif translations.shape.ndims != 2:
            raise TypeError('Translations should have rank 1 or 2, got %s'
                            % translations.shape)
        ones = tf.ones_like(translations[:, 0])
        zeros = tf.zeros_like(ones)
        return tf.stack([ones, zeros, -translations[:, 0], zeros, ones, -translations[:, 1],
                         zeros, zeros], axis=1)


def flat_transforms_to_matrices(transforms):
    """`[8]` or `[N, 8]` transforms -> their `[N, 3, 3]` matrices.

    Raises:
      ValueError: `transforms` of rank other than 1 or 2.
    """
    with tf.name_scope('flat_transforms_to_matrices'):
        transforms = tf.convert_to_tensor(transforms, name='transforms')
        if transforms.shape.ndims not in (1, 2):
            raise ValueError('Transforms should be 1D or 2D, got: %s' % transforms)
        transforms = tf.reshape(transforms, [-1, 8])
        last = tf.ones([tf.shape(transforms)[0], 1], transforms.dtype)
        return tf.reshape(tf.concat([transforms, last], axis=1), [-1, 3, 3])


def matrices_to_flat_transforms(transform_matrices):
    """`[3, 3]` or `[N, 3, 3]` matrices -> `[N, 8]` transforms, each matrix divided by its
    last entry.

    Raises:
      ValueError: `transform_matrices` of rank other than 2 or 3.
    """
    with tf.name_scope('matrices_to_flat_transforms'):
        matrices = tf.convert_to_tensor(transform_matrices, name='transform_matrices')
        if matrices.shape.ndims not in (2, 3):
            raise ValueError('Matrices should be 2D or 3D, got: %s' % matrices)
        entries = tf.reshape(matrices, [-1, 9])
        return (entries / entries[:, 8:9])[:, :8]


def compose_transforms(*transforms):
    """The transform that applies the last of `transforms` first, then the one before it:
    their matrices multiplied left to right.

    Args:
      *transforms: `[8]` or `[N, 8]` transforms (at least one).

    Returns:
      `[N, 8]` transforms.
    """
    if not transforms:
        raise ValueError('compose_transforms needs at least one transform')
    with tf.name_scope('compose_transforms'):
        composed = flat_transforms_to_matrices(transforms[0])
        for following in transforms[1:]:
            composed = tf.matmul(composed, flat_transforms_to_matrices(following))
        return matrices_to_flat_transforms(composed)
