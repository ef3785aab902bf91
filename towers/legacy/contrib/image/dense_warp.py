"""`dense_image_warp`: images resampled along a per-pixel flow, by bilinear interpolation, as
TF 1.15's `tf.contrib.image.dense_image_warp` computed them (and its gradients, to the image and
to the flow)."""
import numpy as np

from towers.compat import tf


def _cell(coordinates, size, grid_dtype):
    """Where points fall along one axis of a grid of `size` cells.

    Args:
      coordinates: `[B, Q]` float positions.
      size: the grid's size along the axis (>= 2), a scalar int32 tensor.
      grid_dtype: the dtype of the fractions.

    Returns:
      (`[B, Q]` int32 index of the lower of the two neighbours, in 0..size-2; `[B, Q, 1]`
      fraction of the way to the upper one, in [0, 1]: points beyond the edges take the
      edge's value).
    """
    lowest = tf.constant(0.0, coordinates.dtype)
    highest = tf.cast(size - 2, coordinates.dtype)
    lower = tf.minimum(tf.maximum(lowest, tf.floor(coordinates)), highest)
    # maximum(0, t) then minimum(t, 1), in that order: a point exactly on a grid line gets no
    # gradient, as in TF 1.15.
    fraction = tf.cast(coordinates - lower, grid_dtype)
    fraction = tf.minimum(tf.maximum(tf.constant(0.0, grid_dtype), fraction),
                          tf.constant(1.0, grid_dtype))
    return tf.cast(lower, tf.int32), fraction[:, :, None]


def interpolate_bilinear(grid, query_points, name='interpolate_bilinear', indexing='ij'):
    """Values of `grid` at fractional points, each from its four nearest grid points.

    Args:
      grid: `[B, H, W, C]` float, H and W at least 2.
      query_points: `[B, Q, 2]` float, (row, column) for 'ij' or (column, row) for 'xy'.
      indexing: 'ij' or 'xy'.
      name: the name scope.

    Returns:
      `[B, Q, C]` of `grid`'s dtype.

    Raises:
      ValueError: `grid` not of rank 4, or an unknown `indexing`.
    """
    if indexing not in ('ij', 'xy'):
        raise ValueError("Indexing mode must be 'ij' or 'xy', got %r" % (indexing,))
    with tf.name_scope(name):
        grid = tf.convert_to_tensor(grid)
        query_points = tf.convert_to_tensor(query_points)
        if grid.shape.ndims != 4:
            raise ValueError('Grid must be 4 dimensional. Received size: %s' % grid.shape)
        if query_points.shape.ndims not in (None, 3) or query_points.shape[-1] not in (None, 2):
            raise ValueError('Query points must be [batch, queries, 2]. Received size: %s'
                             % query_points.shape)
        batch, height, width, channels = tf.unstack(tf.shape(grid))
        checks = [tf.assert_greater_equal(height, 2, message='Grid height must be at least 2.'),
                  tf.assert_greater_equal(width, 2, message='Grid width must be at least 2.'),
                  tf.assert_less_equal(tf.cast(batch * height * width, tf.float32),
                                       np.iinfo(np.int32).max / 8.0,
                                       message='The grid is too large for int32 addresses.')]
        with tf.control_dependencies(checks):
            queries = tf.shape(query_points)[1]
            pixels = tf.reshape(grid, [batch * height * width, channels])
        rows, columns = tf.unstack(query_points, axis=2)
        if indexing == 'xy':
            rows, columns = columns, rows
        top, row_fraction = _cell(rows, height, grid.dtype)
        left, column_fraction = _cell(columns, width, grid.dtype)
        first_pixel = (tf.range(batch) * height * width)[:, None]

        def corner(row, column):
            addresses = first_pixel + row * width + column
            return tf.reshape(tf.gather(pixels, addresses), [batch, queries, channels])

        top_left, top_right = corner(top, left), corner(top, left + 1)
        bottom_left, bottom_right = corner(top + 1, left), corner(top + 1, left + 1)
        upper = top_left + column_fraction * (top_right - top_left)
        lower = bottom_left + column_fraction * (bottom_right - bottom_left)
        return upper + row_fraction * (lower - upper)


def dense_image_warp(image, flow, name='dense_image_warp'):
    """`image` resampled along `flow`: output[b, y, x] = image at (y, x) - flow[b, y, x],
    interpolated bilinearly (points outside take the nearest edge's values).

    Args:
      image: `[B, H, W, C]` float, H and W at least 2.
      flow: `[B, H, W, 2]` (row, column) displacements, of `image`'s dtype.
      name: the name scope.

    Returns:
      `[B, H, W, C]` of `image`'s dtype.
    """
    with tf.name_scope(name):
        batch, height, width, channels = tf.unstack(tf.shape(image))
        columns, rows = tf.meshgrid(tf.range(width), tf.range(height))
        pixel_grid = tf.cast(tf.stack([rows, columns], axis=2), flow.dtype)
        query_points = tf.reshape(pixel_grid[None] - flow, [batch, height * width, 2])
        values = interpolate_bilinear(image, query_points)
        return tf.reshape(values, [batch, height, width, channels])
