"""`tf.contrib.image` of TF 1.15 on TensorFlow 2's kernels: projective transforms
(`transforms`: `transform`, `rotate`, `translate` and the helpers that build and compose
transforms), `dense_image_warp` (`dense_warp`), and polyharmonic splines with
`sparse_image_warp` (`splines`).

TF 1.15's ops that had kernels only in contrib's own library (`connected_components`,
`bipartite_match`, `adjust_hsv_in_yiq`, `random_hsv_in_yiq`,
`single_image_random_dot_stereograms`) are not here: TensorFlow 2 has no kernel for them.
"""
