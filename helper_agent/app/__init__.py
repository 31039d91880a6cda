"""`helper app`: the household assistant in a browser (Gradio), over the same graph, checkpointer
and memories as `helper chat` (`helper_agent.chat_runtime`)."""
