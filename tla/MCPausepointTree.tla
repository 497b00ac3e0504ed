-------------------- MODULE MCPausepointTree --------------------
(* TLC only: a three-level run tree (a question, a child with a side effect, a grandchild with a question), the non-atomic cancel loop racing new pauses and the grandchild's start, a crash (no resume servers: the tree and the cancel are the point). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >>,
     << [kind |-> "effect", key |-> "a"], [kind |-> "end"] >>,
     << [kind |-> "ask", names |-> <<"x">>], [kind |-> "end"] >> >>

MCParents == <<0, 1, 2>>

============================================================
