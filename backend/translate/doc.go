// Package translate converts requests, responses and streams between the wire
// formats the gateway speaks: OpenAI Chat Completions (the hub), Anthropic
// Messages, OpenAI Responses and Google's Gemini API (subpackage gemini, its
// own field table). Subpackages hold one pair each; this package holds what
// they share.
//
// Translation never refuses what a real client sends: every field current
// Claude Code (2.1.x, POST /v1/messages) and Codex CLI (0.17x, POST
// /v1/responses) send is translated, passed or dropped on purpose, as the
// tables below say. testdata/clients holds request bodies captured from those
// clients, and clients_test.go checks their translation field by field. What
// has no counterpart at all is a 400 in the client's own error shape naming
// the field and what to change (backend/gateway).
//
// # Claude Code → an OpenAI Chat upstream (anthropic.RequestToChat)
//
// To an Anthropic upstream the body passes through untouched (only "model" is
// rewritten) together with the client's anthropic-beta and anthropic-version
// headers, the only client headers that ever reach an upstream: the body's
// beta fields are only valid with them. An OAuth connection adds its own beta
// to the client's, without repeats.
//
//	Field                                     Chat upstream
//	model                                     the routed model
//	system (string or text blocks)            one leading system message, blocks joined by a blank line;
//	                                          the "x-anthropic-billing-header: …" block is dropped
//	messages[].role "system"                  translated: a system message at the same position (Claude
//	  (mid-conversation-system beta)          Code's environment and reminders); one right after the
//	                                          system prompt joins it; non-text content is a 400 worded
//	                                          so Claude Code resends without system messages
//	user text, image, document blocks         text / image_url / file parts (PDF) / text
//	tool_result (is_error, images inside)     a tool message with the same id ("Error: " prefix);
//	                                          images follow in a user message; tool_reference blocks
//	                                          become "Tool loaded: NAME"
//	assistant text, tool_use, thinking        content, tool_calls with the same ids, reasoning_content;
//	                                          signed thinking and redacted_thinking also as
//	                                          thinking_blocks (LiteLLM's form), for an upstream that
//	                                          takes them back (Anthropic, AWS Converse)
//	server_tool_use, *_tool_result blocks     dropped (results of Anthropic-hosted tools)
//	tools with input_schema                   function tools; defer_loading dropped (deferred tools are
//	                                          offered like the others)
//	server tools (web_search_*, web_fetch_*,  dropped: they run on Anthropic's servers
//	  code_execution_*, bash_*, text_editor_*)
//	tool_choice auto/any/none/tool            auto/required/none/named function;
//	  disable_parallel_tool_use               parallel_tool_calls false
//	thinking enabled + budget_tokens          reasoning_effort: < 8192 low, < 24576 medium, else high
//	thinking adaptive + output_config.effort  reasoning_effort (max, xhigh → high); display dropped
//	output_config.format json_schema          response_format json_schema (name "output", strict)
//	context_management                        dropped: server-side context editing; the client
//	                                          already sends the whole history
//	cache_control (anywhere)                  dropped
//	metadata.user_id                          user; dropped when it is Claude Code's JSON object of
//	                                          device and session ids
//	max_tokens, temperature, top_p            passed
//	stop_sequences                            stop
//	stream                                    stream, with stream_options.include_usage
//	top_k, service_tier, container,           dropped: no Chat counterpart
//	  mcp_servers, citations
//
// # Codex → an OpenAI Chat upstream, and on to an Anthropic upstream
//
// responses.RequestToChat, then anthropic.RequestFromChat:
//
//	Field                                     Chat upstream (Anthropic upstream)
//	model                                     the routed model
//	instructions                              leading system message (system)
//	input message developer / system          system at its position, the leading run merged into one
//	                                          (every system text hoisted into system)
//	input message user / assistant            user / assistant; item ids dropped
//	function_call, function_call_output       tool_calls / tool messages with the same call_id
//	                                          (tool_use / tool_result with the same id)
//	custom_tool_call(_output)                 a call with {"input": …} and its tool message
//	local_shell_call(_output)                 a "local_shell" function call and its tool message
//	reasoning items (encrypted_content)       dropped: no slot in Chat, except the signed blocks the
//	                                          gateway sealed there itself (→ thinking_blocks)
//	additional_tools items (code mode)        dropped: Codex sends them only for its own gpt-6.x
//	                                          models; other model ids get plain function tools
//	tools function                            function tools (input_schema)
//	tools custom (apply_patch, freeform,      a function taking one string "input", the grammar in its
//	  lark grammar)                           description; calls come back as custom_tool_call
//	tools namespace                           dropped: no documented call form outside OpenAI
//	tools web_search, tool_search,            dropped: hosted tools, optional extras for Codex
//	  file_search, local_shell, mcp, …
//	tool_choice, parallel_tool_calls          mapped / passed
//	reasoning.effort                          reasoning_effort (thinking budget: low 4096, medium
//	                                          16384, high 24576)
//	reasoning.summary, reasoning.context      dropped
//	include ["reasoning.encrypted_content"]   a reasoning item's encrypted_content carries the answer's
//	                                          signed thinking_blocks (opaque, read back next turn)
//	store, prompt_cache_key, client_metadata, dropped: the gateway keeps no state; caching is the
//	  metadata, safety_identifier,            upstream's own
//	  service_tier, truncation
//	text.format                               response_format
//	text.verbosity                            dropped
//	max_output_tokens                         max_tokens
//	temperature, top_p, user                  passed
//	stream                                    stream, with stream_options.include_usage
//	background                                served synchronously (X-OmniRoute-Warning)
//	previous_response_id, conversation,       400: the gateway is stateless; send the whole
//	  prompt, item_reference                  conversation
package translate
