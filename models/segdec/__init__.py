"""segdec: SegDecNet (Tabernik et al. 2019), its multi-GPU version ported and regressed.

`model` (the segmentation and decision nets), `recipe` (the two-stage schedule), `regression`
(its figures against the original's), `entry` (its registry entry). Scripts: train_segdec.py,
eval_segdec.py, regress_segdec.py, make_kolektor_data.py; data: `models.datasets.kolektor`.
"""
