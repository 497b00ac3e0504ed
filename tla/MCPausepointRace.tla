-------------------- MODULE MCPausepointRace --------------------
(* TLC only: two resume servers with two different responses and bindings ok or scope on one question, a clock with three values around the expiry. *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
