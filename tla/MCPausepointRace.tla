-------------------- MODULE MCPausepointRace --------------------
(* TLC only: two resume servers with two different responses and bindings ok or scope on a step of two questions, a clock with three values around the expiry. *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q1", "q2">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
