-------------------- MODULE SIMPausepoint --------------------
(* Random simulation (TLC -simulate) over constants too large to enumerate: a three-level tree with effects and questions, two resume servers, two responses, three bindings, two keys, a longer clock and two crashes. *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "effect", key |-> "a"], [kind |-> "ask", names |-> <<"q1", "q2">>], [kind |-> "end"] >>,
     << [kind |-> "ask", names |-> <<"q">>], [kind |-> "effect", key |-> "b"], [kind |-> "end"] >>,
     << [kind |-> "ask", names |-> <<"x">>], [kind |-> "end"] >> >>

MCParents == <<0, 1, 2>>

============================================================
