-------------------- MODULE SIMPausepoint --------------------
(* Random simulation (TLC -simulate) over constants too large to enumerate:
   two runs with effects before and after their asks, three pause points, two
   resume servers answering "yes" or "no", a longer clock and two crashes. *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "effect", key |-> "a"], [kind |-> "ask", names |-> <<"q1", "q2">>], [kind |-> "end"] >>,
     << [kind |-> "ask", names |-> <<"q">>], [kind |-> "effect", key |-> "b"], [kind |-> "end"] >> >>

MCParents == <<0, 1>>

============================================================
