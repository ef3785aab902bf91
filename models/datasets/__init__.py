"""The data sets, one package each, usable by any model, all offering the same names:

    data_dir = <set>.locate_or_generate(data_dir)   # the real set, or one generated in its format
    batch = <set>.training_input(...)               # the training stream (tensors)
    data = <set>.evaluation_input(...)              # what an evaluation reads
    dataset = <set>.validation_input(...)           # the held-out batches, once (tf.data)
    with <set>.naming_bad_input(...):               # where the graph finds a bad input
        session.run(...)                            #   one TowersError naming the file

Each package holds `reader.py` (the real format; a bad file or record stops with one error
naming it) and `synthetic.py` (a small learnable set written in that same format, for default
runs and tests); its `__init__.py` holds what the scripts' flags show (`DEFAULT_DATA_DIR`, ...)
and imports those modules when one of their names is first used (`towers.lazy`), so that a
script reads its flags without TensorFlow. `locate_or_generate`, reading bad inputs and opening
images go through `towers.datasets`, so every set finds, generates and reports alike.
"""
