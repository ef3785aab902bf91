"""Polyharmonic spline interpolation and the image warp built on it, as TF 1.15's
`tf.contrib.image.interpolate_spline` and `sparse_image_warp` computed them.

The spline through n points c_i with values f_i is
`s(x) = sum_i w_i phi(|x - c_i|^2) + v . [x, 1]`, its weights solving the linear system
`[[A + lambda I, B], [B^T, 0]] [w; v] = [f; 0]` with `A_ij = phi(|c_i - c_j|^2)` and
`B = [c, 1]`; `phi` of a squared distance r is r^(k/2) for odd order k and
r^(k/2) log(r) / 2 for even k (`r` at least 1e-10).
"""
import numpy as np

from towers.compat import tf
from towers.legacy.contrib.image.dense_warp import dense_image_warp

_SMALLEST_SQUARED_DISTANCE = 1e-10


def _phi(squared_distances, order):
    """The kernel of an order-`order` spline, of squared distances."""
    with tf.name_scope('phi'):
        r = tf.maximum(squared_distances, _SMALLEST_SQUARED_DISTANCE)
        if order == 1:
            return tf.sqrt(r)
        if order == 2:
            return 0.5 * squared_distances * tf.log(r)
        if order == 4:
            return 0.5 * tf.square(squared_distances) * tf.log(r)
        if order % 2 == 0:
            return 0.5 * tf.pow(r, 0.5 * order) * tf.log(r)
        return tf.pow(r, 0.5 * order)


def _squared_distances(x, y=None):
    """`[B, n, d]` and `[B, m, d]` points -> `[B, n, m]` squared distances between them; with
    `y` None, between the points of `x`, from one Gram matrix so that the diagonal is 0."""
    if y is None:
        products = tf.matmul(x, x, adjoint_b=True)
        x_norms = y_norms = tf.matrix_diag_part(products)
    else:
        products = tf.matmul(x, y, adjoint_b=True)
        x_norms, y_norms = tf.reduce_sum(tf.square(x), 2), tf.reduce_sum(tf.square(y), 2)
    return x_norms[:, :, None] - 2 * products + y_norms[:, None, :]


def _solve(centers, values, order, regularization_weight):
    """The spline's weights: `[B, n, k]` on the kernels and `[B, d + 1, k]` on `[x, 1]`."""
    batch, count = tf.unstack(tf.shape(centers))[:2]
    dims, outputs = tf.dimension_value(centers.shape[-1]), tf.dimension_value(values.shape[-1])
    if dims is None or outputs is None:
        raise ValueError('interpolate_spline: the last dimensions of train_points (d) and '
                         'train_values (k) must be statically known, got %s and %s'
                         % (centers.shape, values.shape))
    with tf.name_scope('construct_linear_system'):
        kernels = _phi(_squared_distances(centers), order)
        if regularization_weight > 0:
            kernels += regularization_weight * tf.eye(count, dtype=centers.dtype)[None]
        affine = tf.concat([centers, tf.ones_like(centers[..., :1])], 2)
        corner = tf.zeros([batch, dims + 1, dims + 1], centers.dtype)
        lhs = tf.concat([tf.concat([kernels, tf.transpose(affine, [0, 2, 1])], 1),
                         tf.concat([affine, corner], 1)], 2)
        rhs = tf.concat([values, tf.zeros([batch, dims + 1, outputs], centers.dtype)], 1)
    with tf.name_scope('solve_linear_system'):
        weights = tf.matrix_solve(lhs, rhs)
    return weights[:, :count], weights[:, count:]


def interpolate_spline(train_points, train_values, query_points, order,
                       regularization_weight=0.0, name='interpolate_spline'):
    """Values at `query_points` of the polyharmonic spline through the training points.

    Args:
      train_points: `[B, n, d]` float, d statically known.
      train_values: `[B, n, k]`, k statically known.
      query_points: `[B, m, d]`.
      order: the spline's order, a positive int (1 linear, 2 thin-plate, ...).
      regularization_weight: lambda >= 0 of the system above (0: the spline passes through
        the points exactly).
      name: the name scope.

    Returns:
      `[B, m, k]` values.
    """
    with tf.name_scope(name):
        train_points = tf.convert_to_tensor(train_points)
        train_values = tf.convert_to_tensor(train_values)
        query_points = tf.convert_to_tensor(query_points)
        with tf.name_scope('solve'):
            kernel_weights, affine_weights = _solve(train_points, train_values, order,
                                                    regularization_weight)
        with tf.name_scope('predict'):
            kernels = _phi(_squared_distances(query_points, train_points), order)
            affine = tf.concat([query_points, tf.ones_like(query_points[..., :1])], 2)
            return tf.matmul(kernels, kernel_weights) + tf.matmul(affine, affine_weights)


def _boundary_points(height, width, points_per_edge):
    """`[P, 2]` (row, column) points on the image's border: `points_per_edge + 2` evenly
    spaced along each side, corners included, in row-major order."""
    rows = np.linspace(0, height - 1, points_per_edge + 2)
    columns = np.linspace(0, width - 1, points_per_edge + 2)
    return np.array([(row, column) for row in rows for column in columns
                     if row in (0, height - 1) or column in (0, width - 1)])


def sparse_image_warp(image, source_control_point_locations, dest_control_point_locations,
                      interpolation_order=2, regularization_weight=0.0, num_boundary_points=0,
                      name='sparse_image_warp'):
    """`image` warped so that what was at each source control point moves to its destination:
    the flow at the control points is interpolated by a spline over every pixel, then the
    image is resampled along it (`dense_image_warp`).

    Args:
      image: `[B, H, W, C]` float with a static shape.
      source_control_point_locations: `[B, P, 2]` (row, column) points.
      dest_control_point_locations: `[B, P, 2]`, where they go.
      interpolation_order: the spline's order.
      regularization_weight: its lambda (see `interpolate_spline`).
      num_boundary_points: if > 0, pins that many points per image side (counting a corner
        once per side) to zero flow.
      name: the name scope.

    Returns:
      (`[B, H, W, C]` warped image, `[B, H, W, 2]` dense flow).
    """
    image = tf.convert_to_tensor(image)
    sources = tf.convert_to_tensor(source_control_point_locations)
    destinations = tf.convert_to_tensor(dest_control_point_locations)
    flows = destinations - sources
    with tf.name_scope(name):
        batch, height, width, _ = image.shape.as_list()
        pixels = np.stack(np.meshgrid(np.arange(height), np.arange(width), indexing='ij'),
                          -1).reshape([1, height * width, 2])
        pixels = tf.constant(np.tile(pixels, [batch, 1, 1]), image.dtype)
        if num_boundary_points > 0:
            border = _boundary_points(height, width, num_boundary_points - 1)
            pinned = np.tile(border[None], [batch, 1, 1])
            destinations = tf.concat([destinations, tf.constant(pinned, destinations.dtype)],
                                     1)
            flows = tf.concat([flows, tf.zeros(pinned.shape, destinations.dtype)], 1)
        dense_flows = interpolate_spline(destinations, flows, pixels, interpolation_order,
                                         regularization_weight)
        dense_flows = tf.reshape(dense_flows, [batch, height, width, 2])
        return dense_image_warp(image, dense_flows), dense_flows
