"""Binary segmentation with a ResNet-34 encoder: Unet, Linknet and FPN, as `segmentation_models`
builds them, in graph mode with tf-slim."""
