"""ImageNet's input pipelines, with `tf.data`, over a source of `sources` (TFRecord shards or
a list file of JPEGs).

`training_input` gives the reference's augmentation; `evaluation_input` its evaluation: the centre
crop, and the ten crops of the classic 10-crop test. Both work at any `image_size`: the
reference's pixel sizes (shorter side 256-384 for 224 crops, 256 at test) scale with it.

Bad input stops with one error naming the file and the record: what opening the source checks
(`sources`), and, in the pipeline, where each record carries where it came from, a record
without `image/encoded`, with a label outside 1..1000 or with a JPEG that cannot be decoded;
run the session inside `naming_bad_input(source)` to get those as one `TowersError`.
"""
import logging
import math

from towers import datasets
from towers.compat import tf

log = logging.getLogger(__name__)

# The reference's pixel sizes, for 224x224 crops; other crop sizes scale them.
REFERENCE_CROP = 224
TRAIN_SHORTER_SIDE = (256, 384)
EVAL_SHORTER_SIDE = 256
ASPECT_RATIO = (0.8, 1.25)
HUE_DELTA_DEGREES = 36.0
SATURATION_SCALE = (0.6, 1.4)
BRIGHTNESS_SCALE = (0.6, 1.4)
PCA_STDDEV = 0.1
# Per-channel statistics of ImageNet in RGB order on 0..255 (the reference lists the means in
# OpenCV's BGR order), and the eigen-decomposition of its pixel covariance for the lighting
# noise (AlexNet's; the rows of EIGENVECTORS are R, G, B).
MEAN_RGB = (123.68, 116.779, 103.939)
STDDEV_RGB = (58.393, 57.12, 57.375)
EIGENVALUES = (55.46, 4.794, 1.148)
EIGENVECTORS = ((-0.5675, 0.7192, 0.4009),
                (-0.5808, -0.0045, -0.8140),
                (-0.5836, -0.6948, 0.4203))

# The evaluation's crops of each image, in this order: centre first, then the four corners
# (top left, top right, bottom left, bottom right), then the same five of the mirrored image.
CENTRE_CROP = 0
NUM_TEN_CROPS = 10


def scaled_size(pixels, image_size):
    """A pixel size of the reference's 224x224 recipe, scaled to crops of `image_size`."""
    return int(round(pixels * image_size / float(REFERENCE_CROP)))

def _decode(encoded):
    """JPEG (or PNG, as one of ImageNet's training "JPEG"s is) bytes -> [h, w, 3] uint8."""
    return tf.io.decode_image(encoded, channels=3, expand_animations=False)


def _resize_shorter_side(image, shorter_side, aspect_ratio=1.0):
    """Stretches the longer side by `aspect_ratio`, then scales the image so that its shorter
    side is `shorter_side`: [h, w, 3] -> [h', w', 3] float32, bilinear."""
    size = tf.cast(tf.shape(image)[:2], tf.float32)
    height_longer = size[0] >= size[1]
    size = size * tf.where_v2(height_longer, [aspect_ratio, 1.0], [1.0, aspect_ratio])
    size = size * tf.cast(shorter_side, tf.float32) / tf.reduce_min(size)
    return tf.image.resize(image, tf.cast(tf.round(size), tf.int32))


def _train_crop(image, image_size, key):
    """The reference's geometry for one image: [h, w, 3] uint8 -> [S, S, 3] float32.

    The longer side stretched by a factor drawn from 0.8-1.25, the shorter side scaled to an
    integer drawn from 256-384 (scaled with S), and a uniformly placed S x S crop; drawn
    statelessly from `key` ([2] int64).
    """
    keys = tf.random.experimental.stateless_split(key, 3)
    aspect_ratio = tf.random.stateless_uniform([], keys[0], *ASPECT_RATIO)
    low, high = (scaled_size(side, image_size) for side in TRAIN_SHORTER_SIDE)
    shorter_side = tf.random.stateless_uniform([], keys[1], low, high, dtype=tf.int32)
    resized = _resize_shorter_side(image, shorter_side, aspect_ratio)
    # The corner as `tf.image.random_crop` draws it.
    corner = tf.random.stateless_uniform([2], keys[2], 0, tf.int32.max, dtype=tf.int32) % (
        tf.shape(resized)[:2] - image_size + 1)
    return tf.slice(resized, tf.concat([corner, [0]], 0), [image_size, image_size, 3])


def _eval_crops(image, image_size, ten_crop):
    """[h, w, 3] uint8 -> [k, S, S, 3] float32: the shorter side scaled to 256 (scaled with S),
    then the centre crop (k = 1) or the ten crops in the order of `CENTRE_CROP`."""
    resized = _resize_shorter_side(image, scaled_size(EVAL_SHORTER_SIDE, image_size))
    height, width = tf.shape(resized)[0], tf.shape(resized)[1]
    top, left = (height - image_size) // 2, (width - image_size) // 2
    bottom, right = height - image_size, width - image_size
    corners = [(top, left)]
    if ten_crop:
        corners += [(0, 0), (0, right), (bottom, 0), (bottom, right)]
    views = [resized, tf.reverse(resized, [1])] if ten_crop else [resized]
    return tf.stack([view[y:y + image_size, x:x + image_size] for view in views
                     for y, x in corners])


def centre_crops(images, image_size):
    """The evaluation's centre crop of each image of a batch (what the exported model does to
    the images it is sent).

    Args:
      images: [b, h, w, 3] uint8 RGB, decoded, any one size.
      image_size: S.

    Returns:
      [b, S, S, 3] float32, normalised per channel: each image's shorter side scaled to 256
      (scaled with S), its centre S x S crop, as `evaluation_input` gives it.
    """
    crops = tf.map_fn(lambda image: _eval_crops(image, image_size, False)[CENTRE_CROP], images,
                      fn_output_signature=tf.float32)
    return normalize(crops)


def _colour_augment(images, key):
    """The reference's per-image flip and colour changes, drawn per image (statelessly, from
    `key`, [2] int64), applied per batch.

    A horizontal flip with probability 1/2; in HSV, a hue shift of up to +-36 degrees and
    saturation and value multiplied by 0.6-1.4 (capped at their maximum); PCA lighting noise
    (AlexNet's) with standard deviation 0.1, clipped to 0..255.

    Args:
      images: [n, S, S, 3] float32 RGB in 0..255.

    Returns:
      [n, S, S, 3] float32 RGB in 0..255.
    """
    num = tf.shape(images)[0]
    keys = tf.random.experimental.stateless_split(key, 5)
    flip = tf.random.stateless_uniform([num, 1, 1, 1], keys[0]) < 0.5
    images = tf.where_v2(flip, tf.reverse(images, [2]), images)
    hsv = tf.image.rgb_to_hsv(images / 255.0)
    hue_shift = tf.random.stateless_uniform([num, 1, 1], keys[1], -HUE_DELTA_DEGREES,
                                            HUE_DELTA_DEGREES) / 360.0
    saturation = tf.random.stateless_uniform([num, 1, 1], keys[2], *SATURATION_SCALE)
    value = tf.random.stateless_uniform([num, 1, 1], keys[3], *BRIGHTNESS_SCALE)
    hsv = tf.stack([tf.math.floormod(hsv[..., 0] + hue_shift, 1.0),
                    tf.minimum(hsv[..., 1] * saturation, 1.0),
                    tf.minimum(hsv[..., 2] * value, 1.0)], axis=-1)
    images = tf.image.hsv_to_rgb(hsv) * 255.0
    alpha = tf.random.stateless_normal([num, 3], keys[4], stddev=PCA_STDDEV)
    lighting = tf.matmul(alpha * tf.constant(EIGENVALUES), tf.constant(EIGENVECTORS),
                         transpose_b=True)
    return tf.clip_by_value(images + lighting[:, None, None, :], 0.0, 255.0)


def normalize(images):
    """Per-channel mean/stddev normalisation: [..., 3] RGB in 0..255 -> [..., 3] float32."""
    return (images - tf.constant(MEAN_RGB)) / tf.constant(STDDEV_RGB)


def _checked_images(records, ordered, image_fn, image_shape):
    """The records as (image_fn(decoded image, key), label), each record checked.

    A record whose `problem` is not empty, or whose image cannot be decoded, fails the
    pipeline with a message naming it: the decode runs in a one-record dataset that drops
    errors, followed by a marker, so a record whose decode failed reaches the check as the
    marker instead of failing without saying which record it was.

    Args:
      records: a dataset of (key, `Records`): the key ([2] int64) seeds the record's random
        choices (`towers.datasets.with_random_keys`).
      ordered: whether the images come in the records' order; else as they are decoded.
      image_fn: (image [h, w, 3] uint8, key) -> what to train or evaluate on, of `image_shape`.
      image_shape: that shape.
    """
    def _attempt(key, record):
        decoded = tf.data.Dataset.from_tensors(record.encoded).map(
            lambda encoded: (image_fn(_decode(encoded), key), True)).ignore_errors()
        failed = tf.data.Dataset.from_tensors((tf.zeros(image_shape), False))
        return decoded.concatenate(failed).take(1).map(
            lambda image, decoded_ok: (image, record, decoded_ok))

    def _check(image, record, decoded_ok):
        problem = tf.where_v2(
            tf.equal(record.problem, '') & tf.logical_not(decoded_ok),
            'image/encoded is not a JPEG that can be decoded', record.problem)
        check = datasets.check(tf.equal(problem, ''),
                               tf.strings.join([record.where, ': ', problem]))
        with tf.control_dependencies([check]):
            return tf.identity(image), record.label

    images = records.interleave(
        _attempt, cycle_length=tf.data.experimental.AUTOTUNE,
        num_parallel_calls=tf.data.experimental.AUTOTUNE, deterministic=ordered)
    return images.map(_check, num_parallel_calls=tf.data.experimental.AUTOTUNE)


def training_input(source, batch_size, image_size, seed=None):
    """Training batches with the reference's augmentation, shuffled, repeated forever.

    Args:
      source: a `Shards` or a `ListFile`.
      batch_size: images per batch (the global batch of the towers).
      image_size: S, the side of the square crops (224 in the reference).
      seed: of the shuffles and the augmentation (`towers.datasets.input_seed`: by default
        derived from the graph's seed). The images come as they are decoded, unless op
        determinism keeps their order.

    Returns:
      images: [batch_size, S, S, 3] float32, normalised per channel.
      labels: [batch_size] int32 class indices 0..NUM_CLASSES-1.
    """
    images = _checked_images(datasets.with_random_keys(source.records(True, seed), seed), False,
                             lambda image, key: _train_crop(image, image_size, key),
                             [image_size, image_size, 3])
    images = datasets.with_random_keys(images.batch(batch_size, drop_remainder=True), seed,
                                       stream=1)
    images = images.map(lambda key, batch: (normalize(_colour_augment(batch[0], key)), batch[1]),
                        num_parallel_calls=tf.data.experimental.AUTOTUNE)
    return datasets.training_batches(images.prefetch(tf.data.experimental.AUTOTUNE))


def validation_input(source, batch_size, image_size, ten_crop=False):
    """Evaluation batches as a `tf.data.Dataset`: every image of the source once, in order
    (what `evaluation_input` reads, and validation while training).

    Args:
      source: a `Shards` or a `ListFile`.
      batch_size: images per batch; the last batch holds the rest.
      image_size: S.
      ten_crop: ten crops of each image instead of the centre crop alone.

    Returns:
      A dataset of (crops [b, k, S, S, 3] float32, normalised per channel, k = NUM_TEN_CROPS
      with `ten_crop` (in the order of `CENTRE_CROP`), else 1; labels [b] int32 class indices).
    """
    crops = NUM_TEN_CROPS if ten_crop else 1
    # The crops draw nothing: their keys are left unused.
    images = _checked_images(datasets.with_random_keys(source.records(False)), True,
                             lambda image, unused_key: _eval_crops(image, image_size, ten_crop),
                             [crops, image_size, image_size, 3])
    images = images.batch(batch_size).map(lambda batch, labels: (normalize(batch), labels))
    return images.prefetch(tf.data.experimental.AUTOTUNE)


def evaluation_input(source, batch_size, image_size, ten_crop):
    """The batches of `validation_input` as tensors, for an evaluation.

    Returns:
      crops: [b, k, S, S, 3] float32 and labels: [b] int32, as `validation_input` gives them.
      num_batches: how many batches make the whole source.
    """
    dataset = validation_input(source, batch_size, image_size, ten_crop)
    batch_images, labels = tf.data.make_one_shot_iterator(dataset).get_next()
    return batch_images, labels, int(math.ceil(source.num_examples / float(batch_size)))


def naming_bad_input(source):
    """A context that turns the failure of a pipeline over `source` on a bad record into a
    `TowersError` naming the file and the record (`towers.datasets.naming_bad_input`): a record
    that failed a check of the pipeline, or (after reading every file through to find it) a
    shard that holds something that is not a TFRecord record."""
    def check_files():
        log.info('a shard is corrupt: reading %s through to find it', source.description)
        source.check_files()
    return datasets.naming_bad_input(check_files=check_files)
