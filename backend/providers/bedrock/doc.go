// Package bedrock talks to AWS Bedrock's Converse and ConverseStream APIs:
// requests signed with SigV4 (the AWS SDK's signer), the
// application/vnd.amazon.eventstream framing decoded incrementally with both
// checksums verified, and OpenAI Chat Completions translated to Converse and
// back, so a Bedrock target answers in the OpenAI wire the gateway expects.
package bedrock
