#include "worker/curl_result.hpp"

#include <string>

#include "worker/reply_parser.hpp"

namespace convoy::worker {

namespace {

using proto::ErrorKind;

proto::RecordError error_of(ErrorKind kind, std::string_view message) {
  proto::RecordError e;
  e.kind = kind;
  e.message = std::string(message);
  return e;
}

// libcurl refuses a response header line (or, from 8.x, all headers together) over a fixed
// limit with CURLE_OUT_OF_MEMORY before 8.6 and CURLE_TOO_LARGE after: tell the user that.
bool is_header_too_large(CURLcode code) {
#if LIBCURL_VERSION_NUM >= 0x080600
  if (code == CURLE_TOO_LARGE) return true;
#endif
  return code == CURLE_OUT_OF_MEMORY;
}

}  // namespace

bool is_tls_error(CURLcode code) {
  switch (code) {
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_USE_SSL_FAILED:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CLIENTCERT:
      return true;
    default:
      return false;
  }
}

bool reached_server(ErrorKind kind) {
  return kind != ErrorKind::kDns && kind != ErrorKind::kConnect && kind != ErrorKind::kTls &&
         kind != ErrorKind::kSend;
}

proto::RecordError classify_curl_result(const CurlOutcome& o) {
  // A status is known before anything in the body: a non-2xx reply is an http_status error
  // whatever curl said after it.
  if (o.http_status != 0 && (o.http_status < 200 || o.http_status >= 300)) {
    const ServerError e = parse_error_body(o.error_body);
    proto::RecordError out =
        error_of(ErrorKind::kHttpStatus,
                 e.message.empty() ? "HTTP " + std::to_string(o.http_status) : e.message);
    out.code = o.http_status;
    out.type = e.type;
    return out;
  }
  switch (o.code) {
    case CURLE_OK:
      if (o.read_as_stream && !o.saw_done) {
        return error_of(ErrorKind::kStreamDisconnected, "stream ended without [DONE]");
      }
      return {};
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return error_of(ErrorKind::kDns, o.curl_message);
    case CURLE_COULDNT_CONNECT:
      return error_of(ErrorKind::kConnect, o.curl_message);
    case CURLE_OPERATION_TIMEDOUT:
      if (o.got_bytes) return error_of(ErrorKind::kTimeoutMidStream, o.curl_message);
      // Never got to send: the connect (or TLS handshake) timed out.
      if (!o.request_sent) return error_of(ErrorKind::kConnect, o.curl_message);
      return error_of(ErrorKind::kTimeoutBeforeFirstByte, o.curl_message);
    case CURLE_SEND_ERROR:
      return error_of(o.got_bytes ? ErrorKind::kStreamDisconnected : ErrorKind::kSend,
                      o.curl_message);
    case CURLE_RECV_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return error_of(
          !o.got_bytes && !o.request_sent ? ErrorKind::kSend : ErrorKind::kStreamDisconnected,
          o.curl_message);
    default:
      if (is_header_too_large(o.code) && !o.body_started && o.request_sent) {
        // Before any body byte, after the request went out: only the header limit is left.
        return error_of(ErrorKind::kResponseTooLarge,
                        "response header larger than libcurl's limit (" +
                            std::to_string(CURL_MAX_HTTP_HEADER / 1024) +
                            " KiB for one header in libcurl " +
                            curl_version_info(CURLVERSION_NOW)->version +
                            "; curl said: " + std::string(o.curl_message) + ")");
      }
      return error_of(is_tls_error(o.code) ? ErrorKind::kTls : ErrorKind::kOther, o.curl_message);
  }
}

}  // namespace convoy::worker
