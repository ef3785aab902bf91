"""`tf.contrib.util` of TF 1.15: tensor protos and constant folding (`make_tensor_proto`,
`make_ndarray`, `constant_value`) and the ops a `GraphDef` uses (`ops_used_by_graph_def`,
`stripped_op_list_for_graph`), TensorFlow's own functions.

`stripped_op_list_for_graph` leaves out an op TensorFlow does not know, where TF 1.15 raised
`ValueError`; `ops_used_by_graph_def` also counts the ops of functions that a
`PartitionedCall` calls.
"""

from towers.compat import internal, tf

meta_graph = internal('framework.meta_graph')

make_tensor_proto = tf.make_tensor_proto
make_ndarray = tf.make_ndarray
constant_value = tf.get_static_value
ops_used_by_graph_def = meta_graph.ops_used_by_graph_def
stripped_op_list_for_graph = meta_graph.stripped_op_list_for_graph
