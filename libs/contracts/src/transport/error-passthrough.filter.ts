// RPC exception filter that hands a handler's own error back to the JetStream transport unchanged.
// Nest's default filter would replace it with "Internal server error", losing the reason for logs and dead letters.
import { Catch, type RpcExceptionFilter } from '@nestjs/common';
import { throwError, type Observable } from 'rxjs';

/** Register on the microservice that runs {@link JetStreamServer} (`microservice.useGlobalFilters(...)`). */
@Catch()
export class RpcErrorPassthroughFilter implements RpcExceptionFilter<unknown> {
  catch(exception: unknown): Observable<never> {
    return throwError(() => exception);
  }
}
